// Package data embeds the files, templates and systemd units agentiso writes
// into the images it builds, and the RHCOS stream metadata it falls back to when a release's own stream is unknown.
package data

import (
	"embed"
	"io/fs"
)

// agentFiles holds the agent ISO's Ignition sources:
//
//	agent/files/...            files mirrored at their destination path; a
//	                           ".template" suffix marks a text/template
//	agent/systemd/units/...    systemd units (".template" allowed); a
//	                           directory "X.d" holds drop-ins for unit X
//	agent/network/...          files added only when static networking is
//	                           configured
//
//go:embed all:agent
var agentFiles embed.FS

// Agent returns the agent ISO's Ignition sources rooted at "agent", so
// paths look like "files/etc/issue.template" and
// "systemd/units/agent.service". The returned file system is read-only.
func Agent() fs.FS {
	sub, err := fs.Sub(agentFiles, "agent")
	if err != nil {
		// fs.Sub only fails for an invalid path; "agent" is a constant.
		panic(err)
	}
	return sub
}
