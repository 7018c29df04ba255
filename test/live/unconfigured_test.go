//go:build e2elive

package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/test/live/mirror"
)

// The generic ISO flow (docs/unconfigured.md): the hosts boot an ISO built
// from the cluster's InfraEnv, pull secret, ClusterImageSet and mirror
// configuration alone; the lab then attaches config images to node zero's
// second CD drive, as an operator would through virtual media.

// cdStep is one medium put into node zero's second CD drive, and the line
// its journal must print for it.
type cdStep struct {
	name, path string
	want       *regexp.Regexp
}

// loaderPrefix starts every line the generic ISO's loader prints.
const loaderPrefix = "agent-check-config-image: "

// run runs agentiso with args, or says what it printed.
func (l *lab) agentiso(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, l.bin, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("agentiso %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// buildUnconfigured writes the generic ISO (from dir's own manifests, in
// dir/factory) and the config images: a corrupted one, one of another
// cluster (another release), and dir's own, attached in that order.
func (l *lab) buildUnconfigured(ctx context.Context, dir string, m *mirror.Mirror) (string, []cdStep, error) {
	rel := []string{"--offline", "--release-image", m.ReleaseImage, "--release-version", m.Version}
	if err := l.agentiso(ctx, append([]string{"create", "cluster-manifests", "--dir", dir}, rel...)...); err != nil {
		return "", nil, err
	}
	factory := filepath.Join(dir, "factory")
	// The hosts' NMStateConfigs too: the generic ISO brings up their
	// static networking before any config image (checked in
	// attachConfigImages).
	for _, f := range []string{assetdir.InfraEnv, assetdir.PullSecret, assetdir.ClusterImageSet, assetdir.RegistriesConf, assetdir.CABundle, assetdir.NMStateConfig} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if f == assetdir.NMStateConfig && errors.Is(err, fs.ErrNotExist) {
			continue // a scenario without static networking
		}
		if err != nil {
			return "", nil, err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(factory, f)), 0o755); err != nil {
			return "", nil, err
		}
		if err := os.WriteFile(filepath.Join(factory, f), b, 0o600); err != nil {
			return "", nil, err
		}
	}
	// The factory knows the rendezvous IP: a config image must name it.
	if err := os.WriteFile(filepath.Join(factory, assetdir.AgentConfig), []byte("apiVersion: v1beta1\nkind: AgentConfig\nrendezvousIP: 192.168.111.80\n"), 0o600); err != nil {
		return "", nil, err
	}
	if err := l.agentiso(ctx, append([]string{"create", "unconfigured-image", "--dir", factory, "--base-iso", l.fixture}, rel...)...); err != nil {
		return "", nil, err
	}
	if err := l.agentiso(ctx, append([]string{"create", "config-image", "--dir", dir}, rel...)...); err != nil {
		return "", nil, err
	}
	good := filepath.Join(dir, assetdir.ConfigImage)

	// Another cluster's: the same inputs for another release.
	other := filepath.Join(dir, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		return "", nil, err
	}
	for _, f := range []string{assetdir.InstallConfig, assetdir.AgentConfig} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "", nil, err
		}
		if err := os.WriteFile(filepath.Join(other, f), b, 0o600); err != nil {
			return "", nil, err
		}
	}
	i := strings.LastIndex(m.ReleaseImage, "@sha256:") + len("@sha256:")
	otherRelease := m.ReleaseImage[:i] + strings.Repeat("0", 64)
	if err := l.agentiso(ctx, "create", "config-image", "--dir", other, "--offline", "--release-image", otherRelease, "--release-version", m.Version); err != nil {
		return "", nil, err
	}

	// A corrupted one: a byte of config.gz's compressed data flipped.
	iso, err := os.ReadFile(good)
	if err != nil {
		return "", nil, err
	}
	at := bytes.Index(iso[16*2048:], []byte{0x1f, 0x8b, 0x08})
	if at < 0 {
		return "", nil, fmt.Errorf("%s: no gzip stream found", good)
	}
	at += 16*2048 + 200
	iso[at] ^= 0xff
	corrupt := filepath.Join(dir, "corrupt-"+assetdir.ConfigImage)
	if err := os.WriteFile(corrupt, iso, 0o600); err != nil {
		return "", nil, err
	}
	// The drive is the guest's second or third CD (/dev/sr1 or sr2: the
	// machine has a default empty one too).
	refused := regexp.QuoteMeta(loaderPrefix+"refused the config image on /dev/sr") + `\d+: `
	steps := []cdStep{
		{"a corrupted config image", corrupt, regexp.MustCompile(refused + regexp.QuoteMeta("config.gz is corrupt"))},
		{"another cluster's config image (another release)", filepath.Join(other, assetdir.ConfigImage),
			regexp.MustCompile(refused + regexp.QuoteMeta("it is for another cluster: its RELEASE_IMAGE is "+otherRelease))},
		{"the cluster's config image", good, regexp.MustCompile(regexp.QuoteMeta(loaderPrefix + "installed the configuration of cluster live.lab.test"))},
	}
	return filepath.Join(factory, assetdir.UnconfiguredISO("x86_64")), steps, nil
}

// attachConfigImages waits until the host says it waits for its
// configuration; when staticIP is set, checks that the host already holds
// that address (the generic ISO's own keyfiles, before any config image);
// then puts each step's image into its second CD drive and waits for the
// line the step expects in its journal.
func attachConfigImages(ctx context.Context, t *testing.T, vm *VM, staticIP string, steps []cdStep) error {
	refusal := regexp.MustCompile(regexp.QuoteMeta(loaderPrefix+"refused") + ".*")
	waitLine := func(from int, want *regexp.Regexp) (string, int, error) {
		for {
			j := vm.ReadJournal()
			if from <= len(j) {
				if loc := want.FindIndex(j[from:]); loc != nil {
					end := from + loc[1]
					if i := bytes.IndexByte(j[end:], '\n'); i >= 0 {
						end += i
					}
					return string(j[from+loc[0] : end]), end, nil
				}
				// A refusal this step did not expect ends the wait.
				if !strings.Contains(want.String(), "refused") {
					if line := refusal.Find(j[from:]); line != nil {
						return "", 0, fmt.Errorf("the host refused the image: %s", line)
					}
				}
			}
			if vm.Exited() {
				return "", 0, fmt.Errorf("the guest stopped while waiting for %q", want)
			}
			select {
			case <-ctx.Done():
				return "", 0, fmt.Errorf("no %q in the journal before the deadline", want)
			case <-time.After(2 * time.Second):
			}
		}
	}
	_, _, err := waitLine(0, regexp.MustCompile(regexp.QuoteMeta(loaderPrefix+"waiting for the config image")))
	if err != nil {
		return fmt.Errorf("%s: the generic ISO never said it waits for the config image: %w", vm.Name, err)
	}
	t.Logf("%s: waits for its configuration", vm.Name)
	if staticIP != "" {
		if err := awaitAddress(ctx, staticIP, 3*time.Minute); err != nil {
			return fmt.Errorf("%s: the generic ISO's static networking (nmstateconfig.yaml's keyfiles) did not bring up %s before any config image: %w", vm.Name, staticIP, err)
		}
		t.Logf("%s: holds its static address %s before any config image", vm.Name, staticIP)
	}
	for _, s := range steps {
		if err := vm.EjectCD(ctx); err != nil {
			return err
		}
		pos := len(vm.ReadJournal())
		if err := vm.InsertCD(ctx, s.path); err != nil {
			return err
		}
		line, _, err := waitLine(pos, s.want)
		if err != nil {
			return fmt.Errorf("%s, after attaching %s: %w", vm.Name, s.name, err)
		}
		t.Logf("%s: attached %s: %s", vm.Name, s.name, strings.TrimSpace(line))
	}
	return nil
}

// awaitAddress waits until a host answers at ip: a TCP connection to a
// closed port that is refused (or accepted) proves a machine holds the
// address; silence does not.
func awaitAddress(ctx context.Context, ip string, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var last error
	for {
		d := net.Dialer{Timeout: 2 * time.Second}
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ip, "9"))
		if err == nil {
			_ = c.Close()
			return nil
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("no answer within %s: %w", within, last)
		case <-time.After(2 * time.Second):
		}
	}
}
