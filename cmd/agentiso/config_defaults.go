package main

import (
	"fmt"
	"os"

	"github.com/seed-a052040e/agentiso/pkg/baseiso"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// defaultMeanings says, for each setting whose default is empty or zero,
// what that default does, resolved: config view shows it instead of "" or
// 0s (a test keeps every such setting in this table).
func defaultMeanings() map[string]string {
	cache := "none: no user cache directory ($XDG_CACHE_HOME and $HOME unset); give --cache-dir"
	if d, err := baseiso.DefaultCacheDir(os.Getenv); err == nil {
		cache = d
	}
	return map[string]string{
		"release-image":       "none: agentiso pins no release; the ClusterImageSet in cluster-manifests/, else an error",
		"release-version":     "read from the release payload",
		"base-iso":            "the release's RHCOS live ISO: from the cache, else downloaded (or from the mirror's machine-os-images)",
		"base-iso-sha256":     "none: a URL's <URL>.sha256, else the release stream's; a local file is used as is",
		"os-image-mirror":     "none: the release stream's own URL",
		"cache-dir":           cache,
		"timeout":             fmt.Sprintf("%s to bootstrap, then %s to install (install-complete)", minutes(rendezvous.DefaultBootstrapTimeout), minutes(rendezvous.DefaultInstallTimeout)),
		"rendezvous-url":      rendezvous.BaseURL("<rendezvousIP in --dir>"),
		"output-dir":          "none: print the keyfiles as YAML",
		"output-file":         "none: standard output",
		"url":                 "none: required unless --eject",
		"media-user":          "none: the BMCs fetch the ISO without authentication",
		"media-password-file": "none: the BMCs fetch the ISO without authentication",
		"tls-host":            "none: the --listen host only",
		"tls-cert":            "none: plain HTTP unless --tls",
		"tls-key":             "none: plain HTTP unless --tls",
		"user":                "none: no authentication",
		"password-file":       "none: no authentication",
	}
}

func minutes(d interface{ Minutes() float64 }) string { return fmt.Sprintf("%gm", d.Minutes()) }
