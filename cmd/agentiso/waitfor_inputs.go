package main

// This file knows where wait-for and the dev simulator find their inputs
// in --dir, all written by create image (or, for demos, dev init-dir):
//
//   <dir>/rendezvousIP                    plain text, the rendezvous host's IP
//   <dir>/auth/kubeconfig                 admin kubeconfig
//   <dir>/auth/kubeadmin-password         console password (clear text)
//   <dir>/.agentiso/state.json            the asset store's state; read through it:
//       "Agent Auth Config" -> watcher token, public key, ...
//       "TLS Signer CAs"    -> the signers (read only by the dev simulator)
//   <dir>/.agentiso/dev-sim.json          dev only (written by `dev init-dir --local`):
//       where the simulator listens, so wait-for can find it on loopback ports.

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous/sim"
)

// waitForInputs is everything wait-for reads from --dir.
type waitForInputs struct {
	rendezvousIP   string
	restURL        string
	restURLSource  string
	kubeconfig     *credentials.Kubeconfig
	kubeconfigPath string
	passwordPath   string
	auth           *credentials.AuthConfig
}

// loadStateAsset decodes an asset that create image (or dev init-dir) kept
// in the asset store's state, without generating anything.
func loadStateAsset(dir string, a asset.Asset) error {
	p := filepath.Join(dir, assetdir.State)
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("read %s: %w (create the image first, or run 'agentiso dev init-dir' for a demo)", p, err)
	}
	s, err := asset.NewStore(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	if why := s.StateProblem(); why != "" {
		return fmt.Errorf("%s is %s: restore it from a backup, or create the image again (hosts must then boot the new ISO)", p, why)
	}
	ok, err := s.LoadFromState(a)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s does not hold what create image records there (create the image again)", p)
	}
	return nil
}

func readRendezvousIP(dir string) (string, error) {
	p := filepath.Join(dir, assetdir.RendezvousIP)
	b, err := readSmall(p)
	if err != nil {
		return "", fmt.Errorf("read %s: %w (it is written with the agent image)", p, err)
	}
	s := strings.TrimSpace(string(b))
	ip := net.ParseIP(s)
	if ip == nil {
		return "", fmt.Errorf("%s: %q is not an IP address", p, s)
	}
	return ip.String(), nil
}

// loadWaitForInputs reads the rendezvous IP, kubeconfig, watcher token and
// works out the REST URL: restURL (--rendezvous-url or its environment
// variable, named by restURLFrom) when set, else the dev simulator file,
// else http://<rendezvousIP>:8090/api/assisted-install/v2.
func loadWaitForInputs(dir, restURL, restURLFrom string, baseURL func(ip string) string) (*waitForInputs, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	in := &waitForInputs{kubeconfigPath: filepath.Join(abs, assetdir.Kubeconfig), passwordPath: filepath.Join(abs, assetdir.KubeadminPassword)}
	if in.rendezvousIP, err = readRendezvousIP(dir); err != nil {
		return nil, err
	}
	authA := &agent.AuthConfig{}
	if err := loadStateAsset(dir, authA); err != nil {
		return nil, fmt.Errorf("cannot read the install's API tokens (written by create image): %w", err)
	}
	in.auth = &authA.AuthConfig
	if in.auth.WatcherAuthToken == "" {
		return nil, fmt.Errorf("cannot read the install's API tokens: %s holds no watcher token; run agentiso create image with this --dir first", filepath.Join(dir, assetdir.State))
	}
	kb, err := readSmall(in.kubeconfigPath)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", in.kubeconfigPath, err)
	}
	if in.kubeconfig, err = credentials.ParseKubeconfig(kb); err != nil {
		return nil, fmt.Errorf("%s: %w", in.kubeconfigPath, err)
	}
	switch {
	case restURL != "":
		in.restURL, in.restURLSource = restURL, restURLFrom
	default:
		ds, err := sim.ReadDevSim(dir)
		if err != nil {
			return nil, err
		}
		if ds != nil && ds.RESTAddr != "" {
			in.restURL, in.restURLSource = "http://"+ds.RESTAddr+"/api/assisted-install/v2", filepath.Join(dir, filepath.FromSlash(assetdir.DevSim))
		} else {
			in.restURL = baseURL(in.rendezvousIP)
		}
	}
	if _, err := url.Parse(in.restURL); err != nil {
		return nil, fmt.Errorf("rendezvous URL from %s: %w", in.restURLSource, err)
	}
	return in, nil
}

// simInputs is what `dev simulate` reads from --dir.
type simInputs struct {
	rendezvousIP string
	auth         *credentials.AuthConfig
	signers      *credentials.SignerCAs
	kubeconfig   *credentials.Kubeconfig
	dev          *sim.DevSim
}

func loadSimInputs(dir string) (*simInputs, error) {
	in := &simInputs{}
	var err error
	if in.rendezvousIP, err = readRendezvousIP(dir); err != nil {
		return nil, err
	}
	authA, signersA := &agent.AuthConfig{}, &agent.SignerCAs{}
	if err := loadStateAsset(dir, authA); err != nil {
		return nil, err
	}
	if err := loadStateAsset(dir, signersA); err != nil {
		return nil, err
	}
	in.auth, in.signers = &authA.AuthConfig, &signersA.SignerCAs
	kb, err := readSmall(filepath.Join(dir, assetdir.Kubeconfig))
	if err != nil {
		return nil, err
	}
	if in.kubeconfig, err = credentials.ParseKubeconfig(kb); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, assetdir.Kubeconfig), err)
	}
	if in.dev, err = sim.ReadDevSim(dir); err != nil {
		return nil, err
	}
	return in, nil
}

// readSmall reads one of wait-for's inputs: a regular file of at most
// asset.MaxInputFileSize bytes (never a FIFO that would block).
func readSmall(path string) ([]byte, error) {
	return fsutil.ReadRegular(path, asset.MaxInputFileSize)
}
