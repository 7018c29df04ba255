package configimage

import (
	"bytes"
	"compress/gzip"

	"github.com/cavaliercoder/go-cpio"
)

// rawArchive writes members as a gzip cpio exactly as given, sums and all.
func rawArchive(members []Member) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	cw := cpio.NewWriter(zw)
	for _, m := range members {
		if err := cw.WriteHeader(&cpio.Header{Name: m.Path, Mode: cpio.ModeRegular | cpio.FileMode(m.Mode), Size: int64(len(m.Data)), Links: 1}); err != nil {
			return nil, err
		}
		if _, err := cw.Write(m.Data); err != nil {
			return nil, err
		}
	}
	if err := cw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
