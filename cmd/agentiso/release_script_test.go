package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"regexp"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
)

// releaseScriptCmds are the testscript commands of the release tests:
//
//	registry [-auth none|basic|bearer] [-version V] [-arch A] [-multi] [-iso FILE]
//	    start a loopback TLS registry (stopped when the script ends) holding
//	    a synthetic release payload at ocp/release:<V>-<A|multi> and by
//	    digest. With -iso, the payload's machine-os-images component holds
//	    FILE as /coreos/coreos-<A>.iso, and the payload's CoreOS stream names
//	    it (sha256 of FILE; its URL is an unreachable loopback port). Sets
//	    REGISTRY (host:port), RELEASE_DIGEST, RELEASE_TAG (host/ocp/release:tag),
//	    RELEASE_VERSION, ISO_SHA256, REGISTRY_CA_INDENTED (the CA PEM, each
//	    line indented two spaces for a YAML block) and REGISTRY_PULL_SECRET.
//	    With -embeddable, the payload's components are real images in the
//	    registry (a docker-registry and two more sharing a layer, besides
//	    machine-os-images), as --embed-payload reads them. With -ocmirror DIR
//	    (and -iso, -embeddable), the release and its components are also
//	    written to DIR as oc-mirror v2's mirror-to-disk leaves them (archives
//	    mirror_000001.tar, ... cut at 64 KiB), and the registry is then
//	    stopped: nothing can be read from it.
//	sha256 file hex
//	    fail unless the file's sha256 is hex.
//	envsubst file...
//	    replace ${VAR} in the files with the script's environment.
func releaseScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"registry": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg {
				ts.Fatalf("unsupported: ! registry")
			}
			fs := flag.NewFlagSet("registry", flag.ContinueOnError)
			auth := fs.String("auth", "none", "none, basic or bearer")
			version := fs.String("version", "4.19.3", "release version")
			arch := fs.String("arch", "x86_64", "architecture")
			multi := fs.Bool("multi", false, "multi-architecture payload")
			iso := fs.String("iso", "", "live ISO for machine-os-images")
			embeddable := fs.Bool("embeddable", false, "push every component")
			ocmirrorDir := fs.String("ocmirror", "", "also write an oc-mirror v2 archive here, then stop the registry")
			ts.Check(fs.Parse(args))
			opts := testrelease.RegistryOptions{}
			switch *auth {
			case "basic":
				opts.Auth = testrelease.AuthBasic
			case "bearer":
				opts.Auth = testrelease.AuthBearer
			case "none":
			default:
				ts.Fatalf("registry: unknown -auth %q", *auth)
			}
			r, err := testrelease.NewRegistry(opts)
			ts.Check(err)
			ts.Defer(r.Close)
			p := testrelease.Payload{Version: *version, Arch: *arch}
			tag := *version + "-" + *arch
			var mirrored []testrelease.MirroredImage
			if *iso != "" {
				b, err := os.ReadFile(ts.MkAbs(*iso))
				ts.Check(err)
				h := sha256.Sum256(b)
				sum := hex.EncodeToString(h[:])
				rel := "9.6.20260101-0"
				st := testrelease.Stream("rhcos-"+majorMinor(*version), rel, map[string]testrelease.ISO{*arch: {
					Location: "https://127.0.0.1:1/rhcos-" + rel + "-live-iso." + *arch + ".iso", SHA256: sum}})
				mos, err := testrelease.MachineOSImage(*arch, b, st)
				ts.Check(err)
				dg, err := r.Push("ocp/release", "", mos)
				ts.Check(err)
				mirrored = append(mirrored, testrelease.MirroredImage{Repo: "openshift/release", Tag: tag + "-machine-os-images", Image: mos})
				p.Stream = st
				p.Components = testrelease.DefaultComponents()
				p.Components["machine-os-images"] = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@" + dg
				ts.Setenv("ISO_SHA256", sum)
			}
			if *embeddable {
				if p.Components == nil {
					p.Components = map[string]string{}
				}
				for n, img := range embeddableComponents(ts) {
					dg, err := r.Push("ocp/release", "", img)
					ts.Check(err)
					p.Components[n] = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@" + dg
					mirrored = append(mirrored, testrelease.MirroredImage{Repo: "openshift/release", Tag: tag + "-" + n, Image: img})
				}
			}
			var obj any
			if *multi {
				tag = *version + "-multi"
				obj, err = testrelease.Index(p, "x86_64", "aarch64", "ppc64le", "s390x")
			} else {
				obj, err = p.Image()
			}
			ts.Check(err)
			dg, err := r.Push("ocp/release", tag, obj)
			ts.Check(err)
			ts.Setenv("REGISTRY", r.Host)
			ts.Setenv("RELEASE_DIGEST", dg)
			ts.Setenv("RELEASE_TAG", r.Host+"/ocp/release:"+tag)
			ts.Setenv("RELEASE_VERSION", *version)
			ts.Setenv("REGISTRY_CA_INDENTED", "  "+strings.ReplaceAll(strings.TrimSpace(string(r.CAPEM)), "\n", "\n  "))
			ts.Setenv("REGISTRY_PULL_SECRET", string(r.PullSecret()))
			if *ocmirrorDir != "" {
				img, ok := obj.(v1.Image)
				if !ok || *iso == "" || !*embeddable {
					ts.Fatalf("registry -ocmirror needs a single-architecture release with -iso and -embeddable")
				}
				mirrored = append(mirrored, testrelease.MirroredImage{Repo: "openshift/release-images", Tag: tag, Image: img})
				// an additional image of the ImageSetConfiguration, kept
				// by oc-mirror under its path, by digest and by tag
				extra, err := testrelease.Layer(map[string][]byte{"etc/extra": []byte("an additional image\n")})
				ts.Check(err)
				ubi, err := mutate.AppendLayers(empty.Image, extra)
				ts.Check(err)
				ubiDigest, err := ubi.Digest()
				ts.Check(err)
				mirrored = append(mirrored, testrelease.MirroredImage{Repo: "ubi9/ubi", Tag: "sha256-" + ubiDigest.Hex, Image: ubi},
					testrelease.MirroredImage{Repo: "ubi9/ubi", Tag: "latest", Image: ubi})
				ts.Setenv("UBI_DIGEST", ubiDigest.String())
				dir := ts.MkAbs(*ocmirrorDir)
				ts.Check(os.MkdirAll(dir, 0o755))
				_, err = testrelease.OCMirrorArchive(context.Background(), dir, 64<<10, mirrored,
					map[string][]byte{"release-images/" + tag + "/index.json": []byte("{}")})
				ts.Check(err)
				r.Close()
			}
		},
		"sha256": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 2 {
				ts.Fatalf("usage: sha256 file hex")
			}
			b, err := os.ReadFile(ts.MkAbs(args[0]))
			ts.Check(err)
			h := sha256.Sum256(b)
			if got := hex.EncodeToString(h[:]); (got == args[1]) == neg {
				ts.Fatalf("sha256 of %s is %s (want %s%s)", args[0], got, map[bool]string{true: "not ", false: ""}[neg], args[1])
			}
		},
		"envsubst": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) == 0 {
				ts.Fatalf("usage: envsubst file...")
			}
			re := regexp.MustCompile(`\$\{([A-Z_][A-Z0-9_]*)\}`)
			for _, a := range args {
				p := ts.MkAbs(a)
				b, err := os.ReadFile(p)
				ts.Check(err)
				out := re.ReplaceAllStringFunc(string(b), func(m string) string { return ts.Getenv(m[2 : len(m)-1]) })
				ts.Check(os.WriteFile(p, []byte(out), 0o644))
			}
		},
	}
}

func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// embeddableComponents are small component images for -embeddable: the
// registry image and two more, sharing a base layer as a payload's do.
func embeddableComponents(ts *testscript.TestScript) map[string]v1.Image {
	base, err := testrelease.Layer(map[string][]byte{"usr/lib/base": []byte(strings.Repeat("base layer ", 1000))})
	ts.Check(err)
	out := map[string]v1.Image{}
	for _, n := range []string{"docker-registry", "agent-installer-api-server", "cli"} {
		own, err := testrelease.Layer(map[string][]byte{"usr/bin/" + n: []byte(strings.Repeat(n, 500))})
		ts.Check(err)
		img, err := mutate.AppendLayers(empty.Image, base, own)
		ts.Check(err)
		out[n] = img
	}
	return out
}
