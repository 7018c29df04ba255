package release

import "context"

// ReadFiles reads small files (each at most limit bytes) from an image such
// as machine-os-images; absent files are missing from the map. Only
// the tests use it.
func (c *Client) ReadFiles(ctx context.Context, spec string, paths []string, limit int64) (map[string][]byte, string, error) {
	img, from, err := c.image(ctx, spec)
	if err != nil {
		return nil, "", err
	}
	lims := map[string]int64{}
	for i, p := range paths {
		paths[i] = cleanTarName(p)
		lims[paths[i]] = limit
	}
	files, err := c.readFiles(ctx, img, spec, paths, "", lims)
	return files, from, err
}
