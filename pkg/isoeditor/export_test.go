package isoeditor

// CopyRangeLikeCp is the cp baseline of the benchmarks, for the external
// test package.
var CopyRangeLikeCp = copyRangeLikeCp
