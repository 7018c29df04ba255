package isoeditor

import (
	"hash"
	"sync/atomic"
)

// CopyRangeLikeCp is the cp baseline of the benchmarks, for the external
// test package.
var CopyRangeLikeCp = copyRangeLikeCp

// CountHashed makes the writes with opts add every byte they hash for the
// output's sha256 to n.
func CountHashed(opts WriteOptions, n *atomic.Int64) WriteOptions {
	opts.hashWrap = func(h hash.Hash) hash.Hash { return &countingHash{Hash: h, n: n} }
	return opts
}

type countingHash struct {
	hash.Hash
	n *atomic.Int64
}

func (c *countingHash) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return c.Hash.Write(p)
}
