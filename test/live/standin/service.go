package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
	"github.com/seed-a052040e/agentiso/test/live/assisted"
)

// AuthType is the assisted-service AUTH_TYPE of the agent flow: JWTs
// (agentAuth, userAuth, watcherAuth) checked against EC_PUBLIC_KEY_PEM.
const AuthType = "agent-installer-local"

// serviceConfig is what the stand-in assisted-service reads from its
// environment (the env files the assisted-service unit passes).
type serviceConfig struct {
	listen, dbAddr string
	live           assisted.LiveConfig
}

func serviceConfigFromEnv(getenv func(string) string, log *slog.Logger) (*serviceConfig, error) {
	// The agent ISO runs assisted-service with the agent installer's own
	// local JWT authentication (as upstream since OpenShift 4.18).
	if t := getenv("AUTH_TYPE"); t != AuthType {
		return nil, fmt.Errorf("AUTH_TYPE is %q: the agent flow (and this stand-in) authenticates with AUTH_TYPE=%s", t, AuthType)
	}
	pemText := getenv("EC_PUBLIC_KEY_PEM")
	if pemText == "" {
		return nil, errors.New("EC_PUBLIC_KEY_PEM is not set")
	}
	pub, err := credentials.ParsePublicKey(pemText)
	if err != nil {
		return nil, fmt.Errorf("EC_PUBLIC_KEY_PEM: %w", err)
	}
	listen := getenv("STANDIN_LISTEN")
	if listen == "" {
		listen = fmt.Sprintf(":%d", rendezvous.Port)
	}
	db := ""
	if h := getenv("DB_HOST"); h != "" {
		port := getenv("DB_PORT")
		if port == "" {
			port = "5432"
		}
		db = net.JoinHostPort(h, port)
	}
	var releases []assisted.ReleaseImage
	if err := decodeEnvJSON(getenv, "RELEASE_IMAGES", &releases); err != nil {
		return nil, err
	}
	if len(releases) == 0 {
		return nil, errors.New("RELEASE_IMAGES lists no release")
	}
	var osImages []map[string]any
	if err := decodeEnvJSON(getenv, "OS_IMAGES", &osImages); err != nil {
		return nil, err
	}
	var hw []map[string]json.RawMessage
	if err := decodeEnvJSON(getenv, "HW_VALIDATOR_REQUIREMENTS", &hw); err != nil {
		return nil, fmt.Errorf("%w (configure-assisted-hw-requirements.sh fills it before the service starts)", err)
	}
	if len(hw) == 0 {
		return nil, errors.New("HW_VALIDATOR_REQUIREMENTS lists no requirements")
	}
	for i, r := range hw {
		for _, role := range []string{"version", "master", "worker", "sno"} {
			if _, ok := r[role]; !ok {
				return nil, fmt.Errorf("HW_VALIDATOR_REQUIREMENTS[%d] has no %q", i, role)
			}
		}
	}
	return &serviceConfig{listen: listen, dbAddr: db, live: assisted.LiveConfig{
		ReleaseImages:    releases,
		PublicKey:        pub,
		InfraEnvID:       getenv("INFRA_ENV_ID"),
		InstallerImage:   getenv("INSTALLER_IMAGE"),
		BootstrapHostMAC: getenv("BOOTSTRAP_HOST_MAC"),
		Log:              log,
	}}, nil
}

// decodeEnvJSON decodes the JSON value of an environment variable, which
// assisted-service reads at start-up and refuses to start without.
func decodeEnvJSON(getenv func(string) string, name string, out any) error {
	v := getenv(name)
	if v == "" {
		return fmt.Errorf("%s is not set", name)
	}
	if err := json.Unmarshal([]byte(v), out); err != nil {
		return fmt.Errorf("%s is not valid JSON: %w", name, err)
	}
	return nil
}

// waitForDB waits until the database accepts connections, like
// assisted-service, which cannot start without it.
func waitForDB(ctx context.Context, addr string, timeout time.Duration, log *slog.Logger) error {
	deadline := time.Now().Add(timeout)
	for {
		d := net.Dialer{Timeout: 2 * time.Second}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the database at %s did not answer within %s: %w", addr, timeout, err)
		}
		log.Info("waiting for the database", "addr", addr, "error", err.Error())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// runService serves the live simulator until ctx is done.
func runService(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) != 0 {
		return fmt.Errorf("the stand-in assisted-service takes no arguments, got %q", args)
	}
	log := slog.New(slog.NewTextHandler(stdout, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg, err := serviceConfigFromEnv(getenv, log)
	if err != nil {
		return err
	}
	if cfg.dbAddr != "" {
		if err := waitForDB(ctx, cfg.dbAddr, 3*time.Minute, log); err != nil {
			return err
		}
	}
	live, err := assisted.NewLive(cfg.live)
	if err != nil {
		return err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.listen, err)
	}
	srv := &http.Server{Handler: live.Handler(), ReadHeaderTimeout: 10 * time.Second}
	log.Info("stand-in assisted-service serving", "addr", ln.Addr().String(), "infra_env_id", cfg.live.InfraEnvID)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
