package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/internal/fake/testiso/testminiso"
	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
)

// docSection returns the text of a markdown file of the repository from
// the heading heading to the next heading of the same or a higher level
// (a "# " line inside a fenced block is a comment, not a heading).
func docSection(t *testing.T, file, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", file))
	require.NoError(t, err)
	level := strings.IndexByte(heading, ' ')
	require.Positive(t, level, "%q is not a heading", heading)
	var out []string
	in, fence := false, false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if !fence && strings.HasPrefix(l, "#") {
			n := len(l) - len(strings.TrimLeft(l, "#"))
			if in && n <= level && strings.HasPrefix(l[n:], " ") {
				break
			}
			if l == heading {
				in = true
				continue
			}
		}
		if in {
			out = append(out, l)
		}
	}
	require.True(t, in, "%s has no %q", file, heading)
	return strings.Join(out, "\n")
}

// fenced returns the body of the first fenced block of kind lang after
// the line that contains marker.
func fenced(t *testing.T, s, marker, lang string) string {
	t.Helper()
	i := strings.Index(s, marker)
	require.GreaterOrEqual(t, i, 0, "no %q", marker)
	s = s[i:]
	open := "```" + lang + "\n"
	j := strings.Index(s, open)
	require.GreaterOrEqual(t, j, 0, "no %s block after %q", lang, marker)
	s = s[j+len(open):]
	k := strings.Index(s, "```")
	require.GreaterOrEqual(t, k, 0)
	return s[:k]
}

// sampleSizes are the sizes a sample line shows that depend on the pull
// secret and keys (the Ignition config's size and share of the embed
// area): any number matches there.
var sampleSizes = regexp.MustCompile(`\b[0-9]+( bytes)|\b[0-9]+\\\.[0-9]+(%)`)

// sampleLine makes a regular expression of a line of sample output: the
// placeholder <digest> stands for a digest, "..." for anything, a size in
// bytes or percent for any, and a table's padding (two spaces or more) for
// any padding: a column is as wide as its longest value, which a
// placeholder shortens.
func sampleLine(line string) *regexp.Regexp {
	q := regexp.QuoteMeta(line)
	q = regexp.MustCompile(`  +`).ReplaceAllString(q, "  +")
	q = sampleSizes.ReplaceAllString(q, "[0-9.]+$1$2")
	q = strings.ReplaceAll(q, regexp.QuoteMeta("<digest>"), "[0-9a-f]{64}")
	q = strings.ReplaceAll(q, regexp.QuoteMeta("..."), ".*")
	return regexp.MustCompile("^" + q + "$")
}

// docRelease is the release the docs' examples install, in a loopback
// registry that stands in for quay.io.
type docRelease struct {
	reg    *testrelease.Registry
	repo   string // host/ocp/release
	digest string
}

func newDocRelease(t *testing.T, version string) docRelease {
	return newDocReleaseAt(t, version, "ocp/release")
}

// newDocReleaseAt pushes the release to repository path of the registry.
func newDocReleaseAt(t *testing.T, version, path string) docRelease {
	t.Helper()
	reg, err := testrelease.NewRegistry(testrelease.RegistryOptions{Auth: testrelease.AuthBasic})
	require.NoError(t, err)
	t.Cleanup(reg.Close)
	obj, err := testrelease.Payload{Version: version, Arch: "x86_64"}.Image()
	require.NoError(t, err)
	digest, err := reg.Push(path, version+"-x86_64", obj)
	require.NoError(t, err)
	return docRelease{reg: reg, repo: reg.Host + "/" + path, digest: digest}
}

// installConfig is ic with the test registry's pull secret and CA in
// place of the doc's pull secret.
func (r docRelease) installConfig(t *testing.T, ic string) string {
	t.Helper()
	ps := regexp.MustCompile(`(?m)^pullSecret: .*$`)
	require.True(t, ps.MatchString(ic), "no pullSecret line in:\n%s", ic)
	return ps.ReplaceAllLiteralString(ic, "pullSecret: '"+string(r.reg.PullSecret())+"'\nadditionalTrustBundle: |\n  "+strings.ReplaceAll(strings.TrimSpace(string(r.reg.CAPEM)), "\n", "\n  "))
}

// quayRelease is how the docs write the release's repository.
const quayRelease = "quay.io/openshift-release-dev/ocp-release"

// workedExample is the README's worked example's setting: its
// install-config.yaml and agent-config.yaml in mycluster/, a base ISO at
// ~/isos/rhcos-live.x86_64.iso, and its release (4.20.3) in place of
// quay.io's.
func workedExample(t *testing.T) (*docShell, docRelease, string) {
	t.Helper()
	sec := docSection(t, "README.md", "### Worked example: a single-node cluster with a static IP")
	ic := fenced(t, sec, "`mycluster/install-config.yaml`:", "yaml")
	ac := fenced(t, sec, "`mycluster/agent-config.yaml`:", "yaml")
	rel := newDocRelease(t, "4.20.3")
	sh := newDocShell(t)
	sh.write(t, "mycluster/install-config.yaml", rel.installConfig(t, ic), 0o600)
	sh.write(t, "mycluster/agent-config.yaml", ac, 0o600)
	baseISO(t, filepath.Join(sh.dir, "isos", "rhcos-live.x86_64.iso"))
	sh.repl = strings.NewReplacer(
		quayRelease+"@sha256:<digest>", rel.repo+"@"+rel.digest,
		quayRelease+"@sha256:...", rel.repo+"@"+rel.digest,
		quayRelease, rel.repo,
	)
	return sh, rel, ac
}

// baseISO writes a test RHCOS live ISO at path, with the minimal ISO's
// data an RHCOS live ISO carries.
func baseISO(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	_, err := testminiso.WriteFile(path, testiso.Options{})
	require.NoError(t, err)
}

// docConsoleChecks runs each console block that shows output, keyed by
// consoleBlock.key, in the setting its text describes.
func docConsoleChecks() map[string]func(t *testing.T, b consoleBlock) {
	return map[string]func(t *testing.T, b consoleBlock){
		// The worked example, as written.
		"README.md: $ export AGENTISO_RELEASE_IMAGE=quay.io/openshift-release-dev/ocp-release@sha256:<digest>": func(t *testing.T, b consoleBlock) {
			sh, _, _ := workedExample(t)
			steps := parseConsole(b.text)
			// export is the shell's: it carries to the next commands.
			require.True(t, strings.HasPrefix(steps[0].cmd, "export AGENTISO_RELEASE_IMAGE="), steps[0].cmd)
			k, v, _ := strings.Cut(strings.TrimPrefix(steps[0].cmd, "export "), "=")
			sh.setenv(k, sh.repl.Replace(v))
			sh.run(t, b, steps[1:])
		},
		// The typo: the worked example's agent-config.yaml with its first
		// interfaces key misspelt.
		"README.md: $ agentiso create cluster-manifests --dir mycluster": func(t *testing.T, b consoleBlock) {
			sh, rel, ac := workedExample(t)
			sh.setenv("AGENTISO_RELEASE_IMAGE", rel.repo+"@"+rel.digest)
			require.Contains(t, ac, "interfaces:")
			sh.write(t, "mycluster/agent-config.yaml", strings.Replace(ac, "interfaces:", "interfacez:", 1), 0o600)
			sh.run(t, b, parseConsole(b.text))
		},
		// Minimal ISO and PXE files, in the worked example's directory.
		"README.md: $ cat >>mycluster/agent-config.yaml <<EOF": func(t *testing.T, b consoleBlock) {
			sh, rel, _ := workedExample(t)
			sh.setenv("AGENTISO_RELEASE_IMAGE", rel.repo+"@"+rel.digest)
			sh.run(t, b, parseConsole(b.text))
		},
		// The Release line every create command prints, here for create
		// image given --release-image in the worked example's directory.
		"docs/release.md: INFO Release: OpenShift 4.20.3 for x86_64, release image quay.io/openshift-release-dev/ocp-release@sha256:... (given by --release-image; version read from its payload)": func(t *testing.T, b consoleBlock) {
			sh, _, _ := workedExample(t)
			steps := parseConsole(b.text)
			require.Len(t, steps, 1)
			steps[0].cmd = "agentiso create image --dir mycluster --release-image " + quayRelease + "@sha256:... --base-iso ~/isos/rhcos-live.x86_64.iso"
			sh.run(t, b, steps)
		},
		// config view with the lab's file of the next section, its mirror
		// URL carrying a password (the text says so).
		"docs/config.md: $ AGENTISO_LOG_LEVEL=debug agentiso config view create image --config /etc/agentiso/lab.yaml": func(t *testing.T, b consoleBlock) {
			lab := fenced(t, docSection(t, "docs/config.md", "## A disconnected lab: one site-wide file"), "A lab without internet access", "yaml")
			require.Contains(t, lab, "http://mirror.lab.example.com")
			sh := newDocShell(t)
			lab = strings.Replace(lab, "http://mirror.lab.example.com", "http://mirror:s3cret@mirror.lab.example.com", 1)
			require.Contains(t, lab, "@sha256:<digest>")
			lab = strings.Replace(lab, "<digest>", strings.Repeat("4a", 32), 1)
			sh.write(t, "etc/agentiso/lab.yaml", lab, 0o644)
			sh.repl = strings.NewReplacer("/etc/agentiso/", filepath.Join(sh.dir, "etc", "agentiso")+"/")
			sh.run(t, b, parseConsole(b.text))
		},
		// release info in a directory whose install-config.yaml mirrors the
		// release and its components (the mirror is the test registry).
		"docs/release.md: $ agentiso release info --dir mycluster quay.io/openshift-release-dev/ocp-release@sha256:...": func(t *testing.T, b consoleBlock) {
			sec := docSection(t, "README.md", "### Worked example: a single-node cluster with a static IP")
			ic := fenced(t, sec, "`mycluster/install-config.yaml`:", "yaml")
			rel := newDocReleaseAt(t, "4.19.3", "mirror/release")
			src := rel.reg.Host + "/ocp/release"
			sh := newDocShell(t)
			sh.write(t, "mycluster/agent-config.yaml", fenced(t, sec, "`mycluster/agent-config.yaml`:", "yaml"), 0o600)
			sh.write(t, "mycluster/install-config.yaml", rel.installConfig(t, ic)+`imageDigestSources:
- source: `+src+`
  mirrors: [`+rel.repo+`]
- source: quay.io/openshift-release-dev/ocp-v4.0-art-dev
  mirrors: [`+rel.reg.Host+`/mirror/art]
`, 0o600)
			sh.repl = strings.NewReplacer(
				quayRelease+"@sha256:...", src+"@"+rel.digest,
				quayRelease, src,
				"mirror.example.com:5000/ocp/release@sha256:...", rel.repo+"@"+rel.digest,
				"mirror.example.com:5000", rel.reg.Host,
			)
			sh.run(t, b, parseConsole(b.text))
		},
		// The factory builds the generic ISO from ZTP manifests that name
		// no cluster; the site builds the config image of the worked
		// example's cluster for the same release. The registry's CA is
		// in the system trust store (SSL_CERT_FILE): the factory's
		// manifests have no trust bundle.
		"docs/unconfigured.md: # at the factory: no install-config, no agent-config hosts": func(t *testing.T, b consoleBlock) {
			sh, rel, ac := workedExample(t)
			sh.write(t, "ca.pem", string(rel.reg.CAPEM), 0o644)
			sh.setenv("SSL_CERT_FILE", filepath.Join(sh.dir, "ca.pem"))
			sh.write(t, "factory/cluster-manifests/infraenv.yaml", `apiVersion: agent-install.openshift.io/v1beta1
kind: InfraEnv
metadata:
  name: factory
  namespace: cluster0
spec:
  cpuArchitecture: x86_64
  pullSecretRef:
    name: pull-secret
  sshAuthorizedKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGqSD39lBCzJKKW6OKTsxkQCW+GbT/f+OhO9xZLMB4i7 admin@factory
`, 0o600)
			sh.write(t, "factory/cluster-manifests/pull-secret.yaml", `apiVersion: v1
kind: Secret
metadata:
  name: pull-secret
  namespace: cluster0
stringData:
  .dockerconfigjson: '`+string(rel.reg.PullSecret())+`'
`, 0o600)
			sh.write(t, "factory/cluster-manifests/cluster-image-set.yaml", `apiVersion: hive.openshift.io/v1
kind: ClusterImageSet
metadata:
  name: openshift-4.20.3
spec:
  releaseImage: `+rel.repo+"@"+rel.digest+"\n", 0o644)
			baseISO(t, filepath.Join(sh.dir, "rhcos-live.x86_64.iso"))
			ic, err := os.ReadFile(filepath.Join(sh.dir, "mycluster", "install-config.yaml"))
			require.NoError(t, err)
			sh.write(t, "site/install-config.yaml", string(ic), 0o600)
			sh.write(t, "site/agent-config.yaml", ac, 0o600)
			sh.repl = strings.NewReplacer("<the same release>", rel.repo+"@"+rel.digest)
			sh.run(t, b, parseConsole(b.text))
		},
	}
}
