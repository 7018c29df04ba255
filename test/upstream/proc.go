package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Proc is a process started in its own process group, with its combined
// output kept (bounded) for failure reports.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	out  *boundedBuffer
	done chan struct{}
	err  error
}

// boundedBuffer keeps the last max bytes written to it.
type boundedBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = append([]byte(nil), b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// Start starts cmd as a Proc. The process and its children are killed by
// Stop; cmd must not have Stdout, Stderr or SysProcAttr.Setpgid set.
func Start(name string, cmd *exec.Cmd) (*Proc, error) {
	p := &Proc{Name: name, cmd: cmd, out: &boundedBuffer{max: 4 << 20}, done: make(chan struct{})}
	cmd.Stdout = p.out
	cmd.Stderr = p.out
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Exited reports whether the process has ended, and how.
func (p *Proc) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Output returns the last 4 MiB of what the process printed.
func (p *Proc) Output() string { return p.out.String() }

// Stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *Proc) Stop(grace time.Duration) {
	if ok, _ := p.Exited(); ok {
		return
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
}

// Run runs cmd to the end within timeout and returns its combined output.
func Run(ctx context.Context, timeout time.Duration, cmd *exec.Cmd) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.Bytes(), err
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return out.Bytes(), fmt.Errorf("%s: killed after %s: %w", filepath.Base(cmd.Path), timeout, ctx.Err())
	}
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Unprivileged returns the credential to run a program as when the test
// runs as root (PostgreSQL refuses root; the client would write under /etc):
// the user named by AGENTISO_UPSTREAM_USER, else "postgres", else "nobody".
// It returns nil when the test is not root.
func Unprivileged() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	names := []string{"postgres", "nobody"}
	if n := os.Getenv("AGENTISO_UPSTREAM_USER"); n != "" {
		names = []string{n}
	}
	for _, n := range names {
		u, err := user.Lookup(n)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, fmt.Errorf("running as root and none of the users %v exists to run PostgreSQL and the client as (set AGENTISO_UPSTREAM_USER)", names)
}

// Chown gives dir and everything under it to cred (no-op when cred is nil).
func Chown(dir string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(cred.Uid), int(cred.Gid))
	})
}

// PostgresBin finds PostgreSQL's server binaries: $AGENTISO_PG_BIN, else
// Debian's /usr/lib/postgresql/15/bin, else the newest
// /usr/lib/postgresql/*/bin.
func PostgresBin() (string, error) {
	if d := os.Getenv("AGENTISO_PG_BIN"); d != "" {
		return d, nil
	}
	if _, err := os.Stat("/usr/lib/postgresql/15/bin/postgres"); err == nil {
		return "/usr/lib/postgresql/15/bin", nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi < vj
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "postgres")); err == nil {
			return dirs[i], nil
		}
	}
	return "", errors.New("no PostgreSQL server under /usr/lib/postgresql/*/bin: run hack/upstream-deps.sh (Debian's postgresql-15) or set AGENTISO_PG_BIN")
}

// Postgres is a throwaway PostgreSQL server on 127.0.0.1.
type Postgres struct {
	Port int
	Proc *Proc
}

// StartPostgres initialises a cluster in dir and starts it on a free port,
// then creates what upstream's hack/agent_installer/start_db.sh creates: the
// superuser "admin" and the database "installer" (trust authentication,
// initdb's default, as in upstream's image). dir must be empty or absent.
func StartPostgres(ctx context.Context, dir string, cred *syscall.Credential) (*Postgres, error) {
	bin, err := PostgresBin()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	sock := filepath.Join(dir, "sock")
	for _, d := range []string{data, sock} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	if err := Chown(dir, cred); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	as := func(c *exec.Cmd) *exec.Cmd {
		c.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "LC_ALL=C", "HOME=" + dir}
		if cred != nil {
			c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		return c
	}
	if out, err := Run(ctx, 2*time.Minute, as(exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"))); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	proc, err := Start("postgres", as(exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-k", sock,
		"-p", strconv.Itoa(port), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off")))
	if err != nil {
		return nil, err
	}
	pg := &Postgres{Port: port, Proc: proc}
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := Run(ctx, 10*time.Second, as(exec.Command(filepath.Join(bin, "pg_isready"), "-h", "127.0.0.1", "-p", strconv.Itoa(port))))
		if err == nil {
			break
		}
		if ok, werr := proc.Exited(); ok {
			return nil, fmt.Errorf("postgres exited (%v):\n%s", werr, proc.Output())
		}
		if time.Now().After(deadline) {
			proc.Stop(5 * time.Second)
			return nil, fmt.Errorf("postgres not ready after 60s: %s\n%s", out, proc.Output())
		}
		time.Sleep(300 * time.Millisecond)
	}
	p := strconv.Itoa(port)
	for _, c := range [][]string{
		{"createuser", "-h", "127.0.0.1", "-p", p, "-U", "postgres", "-s", "admin"},
		{"createdb", "-h", "127.0.0.1", "-p", p, "-U", "postgres", "installer"},
	} {
		if out, err := Run(ctx, time.Minute, as(exec.Command(filepath.Join(bin, c[0]), c[1:]...))); err != nil {
			proc.Stop(5 * time.Second)
			return nil, fmt.Errorf("%s: %w\n%s", c[0], err, out)
		}
	}
	return pg, nil
}
