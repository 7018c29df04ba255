package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
)

func newCreateCmd(g *globals) *cobra.Command {
	c := group("create", "Create agent install artifacts", newCreateClusterManifestsCmd(g), newCreateAgentConfigTemplateCmd(g), newCreateIgnitionCmd(g),
		newCreateImageCmd(g), newCreatePXEFilesCmd(g), newCreateUnconfiguredIgnitionCmd(g), newCreateUnconfiguredImageCmd(g), newCreateConfigImageCmd(g))
	output.AddPersistentFlag(c, &g.format, "what was written (each file with its size and sha256) and the release")
	return c
}

// create runs a create command: its one package call do on the store of
// --dir (the release flags applied), then, with -o json|yaml and report,
// what was written and the release it installs.
func (g *globals) create(cmd *cobra.Command, rf releaseFlags, report bool, do func(context.Context, *asset.Store) error) error {
	s, err := openStore(g, rf)
	if err != nil {
		return err
	}
	if err := do(cmd.Context(), s); err != nil || !report || g.format == output.Text {
		return err
	}
	return output.Write(g.out, g.format, agent.Describe(cmd.Context(), s, strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")))
}

func newCreateAgentConfigTemplateCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "agent-config-template",
		Short: "Write a commented agent-config.yaml to start from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := agent.WriteAgentConfigTemplate(g.dir)
			if err != nil {
				return err
			}
			console.Outcome(g.log, "Agent-Config-Template created in: "+g.dir)
			if g.format == output.Text {
				return nil
			}
			return output.Write(g.out, g.format, c)
		},
	}
}
