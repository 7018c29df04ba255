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
