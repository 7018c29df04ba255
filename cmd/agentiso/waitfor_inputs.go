package main

// This file is the only place that knows where wait-for and the dev
// simulator find their inputs in --dir. The asset graph will produce these
// files; swap the readers here for the asset store when it lands.
//
// Layout:
//   <dir>/rendezvousIP                    plain text, the rendezvous host's IP
//   <dir>/auth/kubeconfig                 admin kubeconfig
//   <dir>/auth/kubeadmin-password         console password (clear text)
//   <dir>/.agentiso/state.json            {"version":1,"assets":{"<Asset Name>":{"hash":..,"data":..}}}
//       "Agent Auth Config" -> credentials.AuthConfig (watcherAuthToken, publicKey, ...)
//       "TLS Signer CAs"    -> credentials.SignerCAs (read only by the dev simulator)
//   <dir>/.agentiso/dev-sim.json          dev only (written by `dev init-dir --local`):
//       where the simulator listens, so wait-for can find it on loopback ports.

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/credentials"
)

const (
	stateFile          = ".agentiso/state.json"
	devSimFile         = ".agentiso/dev-sim.json"
	assetAuthConfig    = "Agent Auth Config"
	assetSignerCAs     = "TLS Signer CAs"
	rendezvousIPFile   = "rendezvousIP"
	kubeconfigFile     = "auth/kubeconfig"
	kubeadminPassFile  = "auth/kubeadmin-password"
	envRendezvousURL   = "AGENTISO_RENDEZVOUS_URL"
	stateFormatVersion = 1
)

type stateAsset struct {
	Hash string          `json:"hash"`
	Data json.RawMessage `json:"data"`
}

type stateDoc struct {
	Version int                   `json:"version"`
	Assets  map[string]stateAsset `json:"assets"`
}

// devSim records where `dev simulate` serves, for loopback demos and tests.
type devSim struct {
	RESTAddr    string `json:"restAddr"`
	KubeAddr    string `json:"kubeAddr"`
	ClusterName string `json:"clusterName"`
	BaseDomain  string `json:"baseDomain"`
}

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

func readState(dir string) (*stateDoc, error) {
	p := filepath.Join(dir, stateFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w (create the image first, or run 'agentiso dev init-dir' for a demo)", p, err)
	}
	st := &stateDoc{}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("%s: not valid JSON: %w", p, err)
	}
	if st.Version != stateFormatVersion {
		return nil, fmt.Errorf("%s: version %d is not supported (want %d)", p, st.Version, stateFormatVersion)
	}
	return st, nil
}

func stateAssetInto(dir string, st *stateDoc, name string, into any) error {
	a, ok := st.Assets[name]
	if !ok || len(a.Data) == 0 {
		return fmt.Errorf("%s: asset %q is missing", filepath.Join(dir, stateFile), name)
	}
	if err := json.Unmarshal(a.Data, into); err != nil {
		return fmt.Errorf("%s: asset %q: %w", filepath.Join(dir, stateFile), name, err)
	}
	return nil
}

func readDevSim(dir string) (*devSim, error) {
	b, err := os.ReadFile(filepath.Join(dir, devSimFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	d := &devSim{}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, devSimFile), err)
	}
	return d, nil
}

func readRendezvousIP(dir string) (string, error) {
	p := filepath.Join(dir, rendezvousIPFile)
	b, err := os.ReadFile(p)
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
// works out the REST URL: $AGENTISO_RENDEZVOUS_URL, else the dev simulator
// file, else http://<rendezvousIP>:8090/api/assisted-install/v2.
func loadWaitForInputs(dir string, restURLOverride string, baseURL func(ip string) string) (*waitForInputs, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	in := &waitForInputs{kubeconfigPath: filepath.Join(abs, kubeconfigFile), passwordPath: filepath.Join(abs, kubeadminPassFile)}
	if in.rendezvousIP, err = readRendezvousIP(dir); err != nil {
		return nil, err
	}
	st, err := readState(dir)
	if err != nil {
		return nil, err
	}
	in.auth = &credentials.AuthConfig{}
	if err := stateAssetInto(dir, st, assetAuthConfig, in.auth); err != nil {
		return nil, fmt.Errorf("failed to load AuthConfig: %w", err)
	}
	if in.auth.WatcherAuthToken == "" {
		return nil, fmt.Errorf("failed to load AuthConfig: %s: asset %q has no watcherAuthToken", filepath.Join(dir, stateFile), assetAuthConfig)
	}
	kb, err := os.ReadFile(in.kubeconfigPath)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", in.kubeconfigPath, err)
	}
	if in.kubeconfig, err = credentials.ParseKubeconfig(kb); err != nil {
		return nil, fmt.Errorf("%s: %w", in.kubeconfigPath, err)
	}
	switch {
	case restURLOverride != "":
		in.restURL, in.restURLSource = restURLOverride, "--rendezvous-url"
	case os.Getenv(envRendezvousURL) != "":
		in.restURL, in.restURLSource = os.Getenv(envRendezvousURL), "$"+envRendezvousURL
	default:
		ds, err := readDevSim(dir)
		if err != nil {
			return nil, err
		}
		if ds != nil && ds.RESTAddr != "" {
			in.restURL, in.restURLSource = "http://"+ds.RESTAddr+"/api/assisted-install/v2", filepath.Join(dir, devSimFile)
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
	dev          *devSim
}

func loadSimInputs(dir string) (*simInputs, error) {
	in := &simInputs{auth: &credentials.AuthConfig{}, signers: &credentials.SignerCAs{}}
	var err error
	if in.rendezvousIP, err = readRendezvousIP(dir); err != nil {
		return nil, err
	}
	st, err := readState(dir)
	if err != nil {
		return nil, err
	}
	if err := stateAssetInto(dir, st, assetAuthConfig, in.auth); err != nil {
		return nil, err
	}
	if err := stateAssetInto(dir, st, assetSignerCAs, in.signers); err != nil {
		return nil, err
	}
	kb, err := os.ReadFile(filepath.Join(dir, kubeconfigFile))
	if err != nil {
		return nil, err
	}
	if in.kubeconfig, err = credentials.ParseKubeconfig(kb); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, kubeconfigFile), err)
	}
	if in.dev, err = readDevSim(dir); err != nil {
		return nil, err
	}
	return in, nil
}

type devInitOptions struct {
	dir          string
	rendezvousIP string
	clusterName  string
	baseDomain   string
	local        bool
}

func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	a := ln.Addr().String()
	return a, ln.Close()
}

// writeDevInputs generates credentials and writes every file wait-for and
// the simulator read. Secrets are written 0600.
func writeDevInputs(o devInitOptions) error {
	ip := net.ParseIP(o.rendezvousIP)
	if ip == nil {
		return fmt.Errorf("--rendezvous-ip %q is not an IP address", o.rendezvousIP)
	}
	now := time.Now()
	auth, err := credentials.GenerateAuthConfig(rand.Reader)
	if err != nil {
		return err
	}
	signers, err := credentials.GenerateSignerCAs(rand.Reader, now)
	if err != nil {
		return err
	}
	kc, err := credentials.GenerateAdminKubeconfig(rand.Reader, signers, o.clusterName, o.baseDomain, now)
	if err != nil {
		return err
	}
	pw, err := credentials.GenerateKubeadminPassword(rand.Reader)
	if err != nil {
		return err
	}
	if o.local {
		ds := devSim{ClusterName: o.clusterName, BaseDomain: o.baseDomain}
		if ds.RESTAddr, err = freeLoopbackAddr(); err != nil {
			return err
		}
		if ds.KubeAddr, err = freeLoopbackAddr(); err != nil {
			return err
		}
		kc.Clusters[0].Cluster.Server = "https://" + ds.KubeAddr
		b, err := json.MarshalIndent(ds, "", "  ")
		if err != nil {
			return err
		}
		if err := fsutil.WriteFileAtomic(filepath.Join(o.dir, devSimFile), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	st := stateDoc{Version: stateFormatVersion, Assets: map[string]stateAsset{}}
	for name, v := range map[string]any{assetAuthConfig: auth, assetSignerCAs: signers} {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		st.Assets[name] = stateAsset{Hash: hex.EncodeToString(sum[:]), Data: b}
	}
	sb, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	kb, err := kc.Marshal()
	if err != nil {
		return err
	}
	for _, f := range []struct {
		path string
		data []byte
		perm os.FileMode
	}{
		{stateFile, append(sb, '\n'), 0o600},
		{kubeconfigFile, kb, 0o600},
		{kubeadminPassFile, []byte(pw.Password), 0o600},
		{rendezvousIPFile, []byte(ip.String() + "\n"), 0o644},
	} {
		if err := fsutil.WriteFileAtomic(filepath.Join(o.dir, f.path), f.data, f.perm); err != nil {
			return fmt.Errorf("write %s: %w", filepath.Join(o.dir, f.path), err)
		}
	}
	return nil
}
