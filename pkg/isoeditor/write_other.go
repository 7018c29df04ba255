//go:build !linux

package isoeditor

import (
	"context"
	"hash"
	"os"
)

// writeKernel has no kernel-copy implementation off Linux.
func writeKernel(context.Context, *os.File, *os.File, *Image, hash.Hash, WriteOptions) (string, error) {
	return "", errNoFastPath
}

// copyRangeKernel has no kernel-copy implementation off Linux.
func copyRangeKernel(context.Context, *os.File, *os.File, int64, int64, int64, func(done, total int64), func(int64)) error {
	return errNoFastPath
}

// cloneRange has no reflink implementation off Linux: nothing is cloned.
func cloneRange(*os.File, *os.File, int64, int64, int64) int64 { return 0 }

// copyBase has no kernel-copy implementation off Linux.
func copyBase(context.Context, *os.File, *os.File, *Image, WriteOptions, func(int64)) (string, error) {
	return "", errNoFastPath
}

// writeback does nothing off Linux: the final fsync writes everything.
func writeback(*os.File, int64, int64) {}
