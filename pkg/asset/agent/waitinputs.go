package agent

// What wait-for (and the dev simulator) read from --dir, all written by
// create image (or, for demos, agentiso-dev init-dir):
//
//   <dir>/rendezvousIP                    plain text, the rendezvous host's IP
//   <dir>/auth/kubeconfig                 admin kubeconfig
//   <dir>/auth/kubeadmin-password         console password (clear text; only its path is used)
//   <dir>/.agentiso/state.json            the asset store's state; read through it:
//       AuthConfig -> watcher token, public key, ...
//       SignerCAs  -> the signers (read only by the dev simulator)
//   <dir>/.agentiso/dev-sim.json          where the dev simulator serves (DevSim;
//                                         written only by agentiso-dev init-dir --local)

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// WaitInputs is what wait-for reads from the asset directory.
type WaitInputs struct {
	RendezvousIP string
	// Auth holds the watcher token wait-for authenticates with.
	Auth       *credentials.AuthConfig
	Kubeconfig *credentials.Kubeconfig
	// KubeconfigPath and PasswordPath are absolute: they are printed for
	// the user to use after the install.
	KubeconfigPath, PasswordPath string
	// RESTURL is the assisted-service REST API wait-for polls.
	RESTURL string
	// RESTURLSource says where RESTURL was given: "" when it was derived
	// from the rendezvous IP.
	RESTURLSource string
}

// ReadWaitInputs reads the rendezvous IP, the watcher token and the admin
// kubeconfig that create image wrote into dir, and works out the REST URL:
// restURL (--rendezvous-url or its environment variable, named by
// restURLFrom) when set, else the address `agentiso-dev init-dir --local` recorded
// for the dev simulator (DevSim), else rendezvous.BaseURL of the rendezvous
// IP. Its errors say which file is missing or wrong and how to get it back.
func ReadWaitInputs(dir, restURL, restURLFrom string) (*WaitInputs, error) {
	in, err := readWaitFiles(dir)
	if err != nil {
		return nil, err
	}
	in.RESTURL, in.RESTURLSource = restURL, restURLFrom
	if restURL == "" {
		ds, err := ReadDevSim(dir)
		if err != nil {
			return nil, err
		}
		if ds != nil && ds.RESTAddr != "" {
			in.RESTURL, in.RESTURLSource = "http://"+ds.RESTAddr+rendezvous.APIPath, filepath.Join(dir, filepath.FromSlash(assetdir.DevSim))
		} else {
			in.RESTURL, in.RESTURLSource = rendezvous.BaseURL(in.RendezvousIP), ""
		}
	}
	if _, err := url.Parse(in.RESTURL); err != nil {
		return nil, fmt.Errorf("rendezvous URL from %s: %w", in.RESTURLSource, err)
	}
	return in, nil
}

// DevSim records where the dev simulator (`agentiso-dev simulate`) serves,
// for loopback demos and tests (assetdir.DevSim, written by `agentiso-dev init-dir
// --local`): wait-for polls its REST address instead of the rendezvous IP's.
type DevSim struct {
	RESTAddr    string `json:"restAddr"`
	KubeAddr    string `json:"kubeAddr"`
	ClusterName string `json:"clusterName"`
	BaseDomain  string `json:"baseDomain"`
}

// ReadDevSim reads dir's DevSim; nil (and no error) when there is none.
func ReadDevSim(dir string) (*DevSim, error) {
	p := filepath.Join(dir, filepath.FromSlash(assetdir.DevSim))
	b, err := readSmall(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	d := &DevSim{}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return d, nil
}

// readWaitFiles reads the files of WaitInputs, all but the REST URL.
func readWaitFiles(dir string) (*WaitInputs, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	in := &WaitInputs{KubeconfigPath: filepath.Join(abs, assetdir.Kubeconfig), PasswordPath: filepath.Join(abs, assetdir.KubeadminPassword)}
	if in.RendezvousIP, err = ReadRendezvousIP(dir); err != nil {
		return nil, err
	}
	authA := &AuthConfig{}
	if err := LoadFromState(dir, authA); err != nil {
		return nil, fmt.Errorf("cannot read the install's API tokens (written by create image): %w", err)
	}
	in.Auth = &authA.AuthConfig
	if in.Auth.WatcherAuthToken == "" {
		return nil, fmt.Errorf("cannot read the install's API tokens: %s holds no watcher token; run agentiso create image with this --dir first", filepath.Join(dir, assetdir.State))
	}
	if in.Kubeconfig, err = ReadKubeconfig(in.KubeconfigPath); err != nil {
		return nil, err
	}
	return in, nil
}

// ReadKubeconfig reads and parses the admin kubeconfig at path.
func ReadKubeconfig(path string) (*credentials.Kubeconfig, error) {
	b, err := readSmall(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	kc, err := credentials.ParseKubeconfig(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return kc, nil
}

// ReadRendezvousIP reads dir's rendezvousIP file.
func ReadRendezvousIP(dir string) (string, error) {
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

// LoadFromState decodes an asset that create image (or agentiso-dev init-dir) kept
// in dir's asset store state, without generating anything.
func LoadFromState(dir string, a asset.Asset) error {
	p := filepath.Join(dir, assetdir.State)
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("read %s: %w (create the image first, or run 'agentiso-dev init-dir' for a demo)", p, err)
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

// readSmall reads one of wait-for's inputs: a regular file of at most
// asset.MaxInputFileSize bytes (never a FIFO that would block).
func readSmall(path string) ([]byte, error) {
	return fsutil.ReadRegular(path, asset.MaxInputFileSize)
}
