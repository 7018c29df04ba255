package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

// RunOptions are what `agentiso serve` is given.
type RunOptions struct {
	Dir    string
	Listen string
	// TLSCert and TLSKey are PEM files; GenerateTLS makes a self-signed
	// certificate instead (written to CertOut, public).
	TLSCert, TLSKey string
	GenerateTLS     bool
	// TLSHosts are the names and addresses a generated certificate is
	// valid for (the listen address's host is added).
	TLSHosts []string
	// User and PasswordFile turn on basic authentication.
	User, PasswordFile string
	// Extra names more ISOs of Dir to serve (Options.Extra).
	Extra []string
	Log   *slog.Logger
	// ListenGiven says Listen was chosen (on the command line, in the
	// environment or the config file) rather than left at its default,
	// every interface: serving the pull secret there without
	// authentication needs that choice.
	ListenGiven bool
	// Ready, when set, is called with the listener's address once the
	// server accepts connections.
	Ready func(addr net.Addr, scheme string)
}

// CertOut is where a generated certificate is written in the asset
// directory: the certificate only, for a BMC that must be told to trust it.
const CertOut = assetdir.StateDir + "/serve.crt"

// maxPasswordFile bounds --password-file.
const maxPasswordFile = 4096

// Run serves the asset directory until ctx is cancelled (Ctrl-C).
func Run(ctx context.Context, o RunOptions) error {
	lg := o.Log
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key go together: give both, or --tls to generate a certificate")
	}
	if o.GenerateTLS && o.TLSCert != "" {
		return errors.New("--tls generates a certificate: give it or --tls-cert/--tls-key, not both")
	}
	var pass string
	if o.User != "" || o.PasswordFile != "" {
		if o.User == "" || o.PasswordFile == "" {
			return errors.New("basic authentication needs both --user and --password-file")
		}
		b, err := fsutil.ReadRegular(o.PasswordFile, maxPasswordFile)
		if err != nil {
			return fmt.Errorf("read --password-file: %w", err)
		}
		pass = strings.TrimRight(string(b), "\r\n")
		if pass == "" || strings.ContainsAny(pass, "\r\n") {
			return fmt.Errorf("--password-file %s: must hold one line, the password", o.PasswordFile)
		}
	}
	lg.Info("verifying the files to serve against their .sha256", "dir", o.Dir)
	bootPath := bootArtifactsPath(ctx, o.Dir, lg)
	srv, err := New(Options{Dir: o.Dir, User: o.User, Password: pass, Log: lg, BootPath: bootPath, Extra: o.Extra})
	if err != nil {
		return err
	}
	defer srv.Close()
	for _, s := range srv.Skipped() {
		lg.Warn("not serving "+s.Path, "reason", s.Reason)
	}
	var tlsConf *tls.Config
	scheme := "http"
	switch {
	case o.TLSCert != "":
		c, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return fmt.Errorf("load --tls-cert/--tls-key: %w", err)
		}
		tlsConf, scheme = TLSConfig(c), "https"
	case o.GenerateTLS:
		hosts := append([]string{}, o.TLSHosts...)
		if h, _, err := net.SplitHostPort(o.Listen); err == nil && h != "" && h != "0.0.0.0" && h != "::" {
			hosts = append(hosts, h)
		}
		if len(hosts) == 0 {
			return errors.New("--tls needs the names or addresses hosts reach this machine by: --tls-host, or a --listen address with a host")
		}
		ss, err := GenerateCert(hosts, 30*24*time.Hour)
		if err != nil {
			return err
		}
		if err := fsutil.WriteFileAtomic(filepath.Join(o.Dir, filepath.FromSlash(CertOut)), ss.PEM, 0o644); err != nil {
			return fmt.Errorf("write the generated certificate: %w", err)
		}
		lg.Info("generated a self-signed certificate", "file", filepath.Join(o.Dir, filepath.FromSlash(CertOut)), "sha256", ss.Fingerprint, "hosts", strings.Join(hosts, ","))
		tlsConf, scheme = TLSConfig(ss.Cert), "https"
	}
	if pass != "" && tlsConf == nil {
		lg.Warn("basic authentication over plain HTTP: the password crosses the network in clear text; add --tls")
	}
	if err := secretsExposed(srv.Files(), o, pass != "", lg); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.Listen, err)
	}
	base := scheme + "://" + displayHost(ln.Addr())
	for _, f := range srv.Files() {
		if strings.HasSuffix(f.Path, ".sha256") {
			continue
		}
		attrs := []any{"size", f.Size, "sha256", f.SHA256}
		if f.Secret {
			attrs = append(attrs, "secret", "pull secret and tokens")
		}
		lg.Info("serving "+base+"/"+f.Path, attrs...)
	}
	if len(srv.Aliases()) > 0 {
		lg.Info("the boot artifacts are also served at "+base+bootPath+"/ (the path of bootArtifactsBaseURL in agent-config.yaml)", "files", len(srv.Aliases()))
	}
	lg.Info("listening on "+base+" (Ctrl-C stops)", "bind", ln.Addr().String())
	if o.Ready != nil {
		o.Ready(ln.Addr(), scheme)
	}
	err = srv.Serve(ctx, ln, tlsConf, 3*time.Second)
	if _, refused := srv.Conns(); refused > 0 {
		lg.Info("stopped serving", "refused", refused)
	} else {
		lg.Info("stopped serving")
	}
	return err
}

// displayHost is the listener's address as a URL host; an unspecified
// address (all interfaces) is shown as the machine's host name.
func displayHost(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	if ta.IP.IsUnspecified() {
		h, err := os.Hostname()
		if err != nil || h == "" {
			h = "localhost"
		}
		return net.JoinHostPort(h, fmt.Sprint(ta.Port))
	}
	return ta.String()
}

// bootArtifactsPath is the URL path of agent-config.yaml's
// bootArtifactsBaseURL ("" when there is none, or when it is the
// boot-artifacts/ directory's own path): the iPXE script and a minimal
// ISO's root file system URL point there.
func bootArtifactsPath(ctx context.Context, dir string, lg *slog.Logger) string {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	st, err := asset.NewStore(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		return ""
	}
	ac, err := asset.Fetch[*agent.AgentConfig](ctx, st)
	if err != nil {
		lg.Warn("agent-config.yaml is not readable: the boot artifacts are served at /"+assetdir.BootArtifactsDir+"/ only", "reason", err)
		return ""
	}
	if ac.Config == nil || ac.Config.BootArtifactsBaseURL == "" {
		return ""
	}
	u, err := url.Parse(ac.Config.BootArtifactsBaseURL)
	if err != nil {
		return ""
	}
	p := strings.TrimSuffix(path.Clean("/"+u.Path), "/")
	if p == "" || p == "/"+assetdir.BootArtifactsDir {
		return ""
	}
	return p
}

// secretsExposed refuses to serve files holding the pull secret without
// authentication on every interface when --listen was left at its
// default, and warns whenever they are served without authentication
// beyond loopback: whoever reaches the address can download them.
func secretsExposed(files []File, o RunOptions, auth bool, lg *slog.Logger) error {
	var secret []string
	for _, f := range files {
		if f.Secret {
			secret = append(secret, f.Path)
		}
	}
	if len(secret) == 0 || auth {
		return nil
	}
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		host = o.Listen
	}
	ip := net.ParseIP(host)
	every := host == "" || (ip != nil && ip.IsUnspecified())
	if ip != nil && ip.IsLoopback() || host == "localhost" {
		return nil
	}
	names := strings.Join(secret, ", ")
	if every && !o.ListenGiven {
		return fmt.Errorf("not serving %s to every network by default without authentication: it holds the pull secret and the install's tokens, which anyone who can reach this machine could download. Choose where: --listen <this machine's address on the BMC network>:8080 (with --user/--password-file where the BMCs take credentials for virtual media, --tls where they take HTTPS), or --listen :8080 to serve every interface knowingly", names)
	}
	where := "on " + host
	if every {
		where = "on every interface"
	}
	lg.Warn("serving " + names + " without authentication " + where + ": it holds the pull secret and the install's tokens, and anyone who can reach this address can download them; add --user/--password-file (and --tls) where the BMCs support them, and stop serving (Ctrl-C) once the hosts have booted")
	return nil
}
