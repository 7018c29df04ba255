package rendezvoussim

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

// DevDirOptions are `agentiso-dev init-dir`'s choices.
type DevDirOptions struct {
	Dir          string
	RendezvousIP string
	ClusterName  string
	BaseDomain   string
	// Local picks free loopback ports for the simulator, records them
	// (DevSim) and points the kubeconfig at them.
	Local bool
}

// FreeLoopbackAddrs picks n distinct free loopback ports. The listeners
// stay open until all are picked: closed one by one, the kernel may hand
// out the same port twice.
func FreeLoopbackAddrs(n int) ([]string, error) {
	var addrs []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs, nil
}

// WriteDevDir generates credentials and writes every file wait-for and
// the simulator read, as the image build would: rendezvousIP,
// auth/kubeconfig, auth/kubeadmin-password and the asset store's state
// (auth tokens and signer CAs). Secrets are written 0600.
func WriteDevDir(o DevDirOptions) error {
	ip := net.ParseIP(o.RendezvousIP)
	if ip == nil {
		return fmt.Errorf("--rendezvous-ip %q is not an IP address", o.RendezvousIP)
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
	kc, err := credentials.GenerateAdminKubeconfig(rand.Reader, signers, o.ClusterName, o.BaseDomain, now)
	if err != nil {
		return err
	}
	pw, err := credentials.GenerateKubeadminPassword(rand.Reader)
	if err != nil {
		return err
	}
	if o.Local {
		ds := agent.DevSim{ClusterName: o.ClusterName, BaseDomain: o.BaseDomain}
		addrs, err := FreeLoopbackAddrs(2)
		if err != nil {
			return err
		}
		ds.RESTAddr, ds.KubeAddr = addrs[0], addrs[1]
		kc.Clusters[0].Cluster.Server = "https://" + ds.KubeAddr
		b, err := json.MarshalIndent(ds, "", "  ")
		if err != nil {
			return err
		}
		if err := fsutil.WriteFileAtomic(filepath.Join(o.Dir, filepath.FromSlash(assetdir.DevSim)), append(b, '\n'), assetdir.Mode(assetdir.DevSim)); err != nil {
			return err
		}
	}
	store, err := asset.NewStore(o.Dir, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	for _, a := range []asset.Asset{&agent.AuthConfig{AuthConfig: *auth}, &agent.SignerCAs{SignerCAs: *signers}} {
		if err := store.Provide(a); err != nil {
			return err
		}
	}
	if err := store.SaveState(); err != nil {
		return err
	}
	kb, err := kc.Marshal()
	if err != nil {
		return err
	}
	for _, f := range []struct {
		path string
		data []byte
	}{
		{assetdir.Kubeconfig, kb},
		{assetdir.KubeadminPassword, []byte(pw.Password)},
		{assetdir.RendezvousIP, []byte(ip.String() + "\n")},
	} {
		if err := fsutil.WriteFileAtomic(filepath.Join(o.Dir, f.path), f.data, assetdir.Mode(f.path)); err != nil {
			return fmt.Errorf("write %s: %w", filepath.Join(o.Dir, f.path), err)
		}
	}
	return nil
}
