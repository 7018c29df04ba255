package rendezvoussim

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// DirOptions are `agentiso-dev simulate`'s choices besides the directory.
type DirOptions struct {
	Scenario *Scenario
	// Listen and KubeListen override the REST and Kubernetes API
	// addresses (host:port).
	Listen, KubeListen string
	Speed              float64
	HoldUntilSeen      bool
	Log                *slog.Logger
}

// ConfigForDir is the Config that serves o.Scenario to a wait-for run on
// dir (written by create image or WriteDevDir): tokens are checked against
// dir's public key, the Kubernetes API has a serving certificate from its
// signers for the kubeconfig's cluster. The listen addresses are o's, else
// dir's DevSim, else <rendezvousIP>:8090 and the kubeconfig server's
// host:port.
func ConfigForDir(dir string, o DirOptions) (Config, error) {
	ip, err := agent.ReadRendezvousIP(dir)
	if err != nil {
		return Config{}, err
	}
	authA, signersA := &agent.AuthConfig{}, &agent.SignerCAs{}
	if err := agent.LoadFromState(dir, authA); err != nil {
		return Config{}, err
	}
	if err := agent.LoadFromState(dir, signersA); err != nil {
		return Config{}, err
	}
	kc, err := agent.ReadKubeconfig(filepath.Join(dir, assetdir.Kubeconfig))
	if err != nil {
		return Config{}, err
	}
	dev, err := agent.ReadDevSim(dir)
	if err != nil {
		return Config{}, err
	}
	pub, err := authA.ECPublicKey()
	if err != nil {
		return Config{}, err
	}
	kcl, _, err := kc.Current()
	if err != nil {
		return Config{}, err
	}
	clusterName := kc.Clusters[0].Name
	baseDomain := ""
	if u, err := url.Parse(kcl.Server); err == nil {
		baseDomain = strings.TrimPrefix(u.Hostname(), "api."+clusterName+".")
		if baseDomain == u.Hostname() {
			baseDomain = ""
		}
	}
	restAddr, kubeAddr := o.Listen, o.KubeListen
	if dev != nil {
		restAddr = firstNonEmpty(restAddr, dev.RESTAddr)
		kubeAddr = firstNonEmpty(kubeAddr, dev.KubeAddr)
		clusterName = firstNonEmpty(dev.ClusterName, clusterName)
		baseDomain = firstNonEmpty(dev.BaseDomain, baseDomain)
	}
	restAddr = firstNonEmpty(restAddr, net.JoinHostPort(ip, fmt.Sprint(rendezvous.Port)))
	if kubeAddr == "" {
		u, err := url.Parse(kcl.Server)
		if err != nil {
			return Config{}, fmt.Errorf("kubeconfig server %q: %w", kcl.Server, err)
		}
		kubeAddr = u.Host
	}
	cert, err := NewKubeServerCert(rand.Reader, &signersA.SignerCAs, clusterName, firstNonEmpty(baseDomain, "example.com"), time.Now())
	if err != nil {
		return Config{}, err
	}
	pool, err := ClientCAPool(&signersA.SignerCAs)
	if err != nil {
		return Config{}, err
	}
	return Config{
		Scenario: o.Scenario, Speed: o.Speed, HoldUntilSeen: o.HoldUntilSeen, PublicKey: pub, RESTAddr: restAddr, KubeAddr: kubeAddr,
		KubeServerCert: cert, ClientCAs: pool, ClusterName: clusterName, BaseDomain: baseDomain, Log: o.Log,
	}, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Simulate is agentiso-dev simulate: ServeDir with the scenario named by scenario
// (a file, else a built-in name; Load).
func Simulate(ctx context.Context, dir, scenario string, o DirOptions) error {
	if o.Speed <= 0 {
		return errors.New("--speed must be greater than zero")
	}
	sc, err := Load(scenario)
	if err != nil {
		return err
	}
	o.Scenario = sc
	return ServeDir(ctx, dir, o)
}

// ServeDir serves o.Scenario for dir (ConfigForDir) until ctx ends,
// logging on o.Log where it listens and, at the end, how many requests it
// answered and refused (401 or 403).
func ServeDir(ctx context.Context, dir string, o DirOptions) error {
	cfg, err := ConfigForDir(dir, o)
	if err != nil {
		return err
	}
	s, err := New(cfg)
	if err != nil {
		return err
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log.Info("simulating", "scenario", o.Scenario.Name, "speed", o.Speed, "hold", o.HoldUntilSeen, "rest", "http://"+s.RESTAddr()+rendezvous.APIPath, "kube", "https://"+s.KubeAddr())
	if err := s.Run(ctx); err != nil {
		return err
	}
	reqs := s.Requests()
	denied := 0
	for _, r := range reqs {
		if r.Status == 401 || r.Status == 403 {
			denied++
		}
	}
	log.Info("simulator stopped", "requests", len(reqs), "denied", denied)
	return nil
}
