//go:build !linux

package serve

import "io"

// sendFile is Linux's: elsewhere ReadFrom copies piece by piece.
func (c *progressConn) sendFile(io.Reader) (int64, bool, error) { return 0, false, nil }

// writeHeld is Linux's: elsewhere write writes as usual.
func (c *progressConn) writeHeld([]byte) (int, bool, error) { return 0, false, nil }
