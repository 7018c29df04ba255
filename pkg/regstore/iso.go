package regstore

import (
	"context"
	"fmt"
	"io"

	"github.com/seed-a052040e/agentiso/pkg/isofs"
)

// ISOFiles lists the tree for an ISO 9660 image (isofs.Plan): the small
// files first, in path order, then every blob in stream order; each name
// of a blob carries the blob's digest as its key, so its bytes are stored
// once.
func (p *Plan) ISOFiles() []isofs.File {
	var small, blobs []isofs.File
	byBlob := map[string][]isofs.File{}
	for _, f := range p.Files() {
		if f.Data != nil {
			small = append(small, isofs.File{Path: f.Path, Size: f.Size})
			continue
		}
		k := f.Blob.String()
		byBlob[k] = append(byBlob[k], isofs.File{Path: f.Path, Size: f.Size, Key: k})
	}
	for _, b := range p.blobs {
		blobs = append(blobs, byBlob[b.Digest.String()]...)
	}
	return append(small, blobs...)
}

// Fill returns the isofs.Fill that writes the plan's files: a small file
// from memory, a blob read once from its source and checked (CopyBlob).
// progress, when not nil, is told each blob's size once it is written.
func (p *Plan) Fill(progress func(blob *Blob)) isofs.Fill {
	buf := make([]byte, 1<<20)
	return func(ctx context.Context, f isofs.File, w io.Writer) error {
		pf, ok := p.files[f.Path]
		if !ok {
			return fmt.Errorf("regstore: %s is not in the plan", f.Path)
		}
		if pf.Data != nil {
			_, err := w.Write(pf.Data)
			return err
		}
		b := p.byDig[pf.Blob]
		if _, err := CopyBlob(ctx, w, b, buf); err != nil {
			return err
		}
		if progress != nil {
			progress(b)
		}
		return nil
	}
}
