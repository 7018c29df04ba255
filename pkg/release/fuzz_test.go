package release

import (
	"testing"

	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
)

func FuzzParsePayloadFiles(f *testing.F) {
	files := testrelease.Payload{}.Files()
	f.Add(files[MetadataPath], files[ImageReferencesPath], files[BootImagesPath])
	f.Add([]byte(`{"kind":"cincinnati-metadata-v0","version":"4.1.0"}`), []byte(`{"kind":"ImageStream","spec":{"tags":[{"name":"a","from":{"name":"b"}}]}}`), []byte("kind: ConfigMap\ndata: {stream: '{}'}"))
	f.Add([]byte(`null`), []byte(`[]`), []byte("\x00"))
	f.Fuzz(func(t *testing.T, md, refs, boot []byte) {
		if m, err := ParseMetadata(md); err == nil && !versionRE.MatchString(m.Version) {
			t.Fatalf("accepted version %q", m.Version)
		}
		if _, comps, err := ParseImageReferences(refs); err == nil {
			for k, v := range comps {
				if k == "" || v == "" {
					t.Fatalf("accepted empty component %q=%q", k, v)
				}
			}
		}
		if st, raw, err := ParseBootImages(boot); err == nil && (st == nil || st.Stream == "" || len(raw) == 0) {
			t.Fatal("accepted a stream without a name")
		}
	})
}
