package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// hostProgress is the body of PUT .../hosts/{id}/progress
// (assisted-service's host-progress model).
type hostProgress struct {
	CurrentStage string `json:"current_stage"`
	ProgressInfo string `json:"progress_info,omitempty"`
}

// runInstaller stands in for assisted-installer: it checks its arguments,
// reports the Installing stage of its host, and exits. Nothing is written.
func runInstaller(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("assisted-installer", flag.ContinueOnError)
	fs.SetOutput(stdout)
	role := fs.String("role", "", "bootstrap, master, worker or arbiter")
	infraEnv := fs.String("infra-env-id", "", "infra-env id")
	cluster := fs.String("cluster-id", "", "cluster id")
	host := fs.String("host-id", "", "host id")
	disk := fs.String("boot-device", "", "installation disk")
	url := fs.String("url", "", "assisted-service base URL")
	version := fs.String("openshift-version", "", "OpenShift version (none for a day-2 host)")
	ha := fs.String("high-availability-mode", "", "Full or None")
	// The other flags the real agent gives (assisted-installer-agent
	// release-4.20, src/commands/actions/install_cmd.go): taken, unused.
	for _, f := range []string{"controller-image", "agent-image", "mco-image", "must-gather-image", "coreos-image", "installer-args",
		"control-plane-count", "service-ips", "cacert", "http-proxy", "https-proxy", "no-proxy"} {
		fs.String(f, "", "as the real installer's (unused)")
	}
	for _, f := range []string{"insecure", "notify-num-reboots", "check-cluster-version", "enable-skip-mco-reboot", "skip-installation-disk-cleanup"} {
		fs.Bool(f, false, "as the real installer's (unused)")
	}
	fs.Func("format-disk", "a disk to format, repeatable (unused)", func(string) error { return nil })
	if err := fs.Parse(args); err != nil {
		return err
	}
	for n, v := range map[string]string{"role": *role, "infra-env-id": *infraEnv, "cluster-id": *cluster, "host-id": *host, "boot-device": *disk, "url": *url} {
		if v == "" {
			return fmt.Errorf("--%s is required", n)
		}
	}
	token := getenv("PULL_SECRET_TOKEN")
	if token == "" {
		return errors.New("PULL_SECRET_TOKEN (the agent token) is not set")
	}
	fmt.Fprintf(stdout, "stand-in assisted-installer: %s host %s of cluster %s (OpenShift %s, %s), disk %s: nothing is written\n",
		*role, *host, *cluster, *version, *ha, *disk)
	body, err := json.Marshal(hostProgress{CurrentStage: "Installing", ProgressInfo: "lab stand-in installer: " + *role})
	if err != nil {
		return err
	}
	u := strings.TrimSuffix(*url, "/") + rendezvous.APIPath + "/infra-envs/" + *infraEnv + "/hosts/" + *host + "/progress"
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("X-Secret-Key", token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}).Do(req)
	if err != nil {
		return fmt.Errorf("report progress: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("report progress: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	return nil
}
