package main

import (
	"flag"
	"os"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/seed-a052040e/agentiso/internal/fake/testcluster"
	"github.com/seed-a052040e/agentiso/pkg/kubeapi"
)

// clusterScriptCmds:
//
//	cluster [-platform P] [-deny verb:resource[:namespace[:name]]]... kubeconfig
//	    serve an installed cluster (internal/fake/testcluster) whose release is
//	    the one `registry` pushed, and write a kubeconfig for it
func clusterScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"cluster": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg {
				ts.Fatalf("unsupported: ! cluster")
			}
			fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
			platform := fs.String("platform", "BareMetal", "Infrastructure platform type")
			var denies, csrs []string
			fs.Func("csr", "name:node: a pending client CSR of that node", func(s string) error { csrs = append(csrs, s); return nil })
			fs.Func("deny", "verb:resource[:namespace[:name]] to deny", func(s string) error { denies = append(denies, s); return nil })
			ts.Check(fs.Parse(args))
			if fs.NArg() != 1 {
				ts.Fatalf("usage: cluster [-platform P] [-deny verb:resource[:ns[:name]]] kubeconfig")
			}
			o := testcluster.Default()
			o.Platform = *platform
			o.User = "system:serviceaccount:day2:joiner"
			if reg := ts.Getenv("REGISTRY"); reg != "" {
				o.ReleaseImage = reg + "/ocp/release@" + ts.Getenv("RELEASE_DIGEST")
				o.Version = ts.Getenv("RELEASE_VERSION")
				o.PullSecret = ts.Getenv("REGISTRY_PULL_SECRET")
				o.TrustBundle = strings.ReplaceAll(ts.Getenv("REGISTRY_CA_INDENTED"), "\n  ", "\n")[2:] + "\n"
			}
			c, err := testcluster.Start(o)
			ts.Check(err)
			ts.Defer(c.Close)
			for _, d := range denies {
				p := strings.Split(d, ":")
				if len(p) < 2 {
					ts.Fatalf("cluster: -deny %q: want verb:resource[:namespace[:name]]", d)
				}
				r := kubeapi.Resource{Version: "v1", Resource: p[1]}
				if len(p) > 2 {
					r.Namespace = p[2]
				}
				if len(p) > 3 {
					r.Name = p[3]
				}
				c.Deny(p[0], r)
			}
			for _, cs := range csrs {
				name, node, _ := strings.Cut(cs, ":")
				r, err := testcluster.KubeletClientCSR(name, node)
				ts.Check(err)
				ts.Check(c.AddCSR(r))
			}
			ts.Check(os.WriteFile(ts.MkAbs(fs.Arg(0)), c.Kubeconfig(), 0o600))
		},
	}
}
