package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/arch"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

// The `oc` stand-in answers the commands assisted-service and
// agent-installer-client run (assisted-service release-4.20,
// internal/oc/release.go: templateGetImage, templateGetVersion,
// templateImageInfo, and `--help` to learn whether --idms-file exists) by
// reading the lab's release payload with agentiso's own release reader
// (pkg/release, go-containerregistry). `oc adm release extract` is refused:
// it would hand out the real openshift-install, which the lab has not.

// ocHelp lists the flags in oc's help format, which assisted-service parses
// (flagsFromHelpRE) to choose between --idms-file and --icsp-file.
const ocHelp = `Lab stand-in of oc (agentiso test/live/standin): reads the release payload with go-containerregistry.

Options:
    --icsp-file='':
	Path to an ImageContentSourcePolicy file.

    --idms-file='':
	Path to an ImageDigestMirrorSet file.

    --image-for='':
	Print the pull spec of the specified image.

    --insecure=false:
	Allow push and pull operations to registries to be made over HTTP

    -o, --output='':
	Output format.

    -a, --registry-config='':
	Path to your registry credentials.

    --template='':
	Template string.

Usage:
  oc adm release info IMAGE [flags]
  oc image info IMAGE --output json [flags]
`

// ocArgs are the parsed flags of one oc call.
type ocArgs struct {
	cmd                                       string // "adm release info", "image info", "adm release extract"
	image, imageFor, output, template         string
	idmsFile, icspFile, registryConfig, extra string
	help                                      bool
}

func parseOCArgs(args []string) (*ocArgs, error) {
	a := &ocArgs{}
	var words []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") {
			words = append(words, arg)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		takesValue := map[string]*string{"image-for": &a.imageFor, "o": &a.output, "output": &a.output, "template": &a.template,
			"idms-file": &a.idmsFile, "icsp-file": &a.icspFile, "registry-config": &a.registryConfig, "a": &a.registryConfig,
			"command": &a.extra, "to": &a.extra}
		switch {
		case name == "help" || name == "h":
			a.help = true
		case name == "insecure":
			// The lab's mirror is TLS with a CA in the system trust store.
		case takesValue[name] != nil:
			if !hasValue {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("flag --%s needs a value", name)
				}
				i++
				value = args[i]
			}
			*takesValue[name] = value
		default:
			return nil, fmt.Errorf("unknown flag: --%s", name)
		}
	}
	switch {
	case len(words) >= 3 && words[0] == "adm" && words[1] == "release" && (words[2] == "info" || words[2] == "extract"):
		a.cmd, words = strings.Join(words[:3], " "), words[3:]
	case len(words) >= 2 && words[0] == "image" && words[1] == "info":
		a.cmd, words = "image info", words[2:]
	default:
		return nil, fmt.Errorf("the lab's oc stand-in only runs `adm release info`, `image info` and `adm release extract`, not %q", strings.Join(words, " "))
	}
	if a.help {
		return a, nil
	}
	if len(words) != 1 {
		return nil, fmt.Errorf("%s: want one image, got %q", a.cmd, words)
	}
	a.image = words[0]
	return a, nil
}

// mirrorsFile reads an ImageDigestMirrorSet or ImageContentSourcePolicy as
// assisted-service writes them from registries.conf.
func mirrorsFile(path string, icsp bool) ([]release.Mirror, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Spec struct {
			ImageDigestMirrors []struct {
				Source  string
				Mirrors []string
			} `json:"imageDigestMirrors"`
			RepositoryDigestMirrors []struct {
				Source  string
				Mirrors []string
			} `json:"repositoryDigestMirrors"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	entries := doc.Spec.ImageDigestMirrors
	if icsp {
		entries = doc.Spec.RepositoryDigestMirrors
	}
	var out []release.Mirror
	for _, e := range entries {
		out = append(out, release.Mirror{Source: e.Source, Mirrors: e.Mirrors, DigestOnly: true})
	}
	return out, nil
}

// runOC answers one oc command on stdout.
func runOC(ctx context.Context, args []string, stdout io.Writer) error {
	a, err := parseOCArgs(args)
	if err != nil {
		return err
	}
	if a.help {
		_, err := io.WriteString(stdout, ocHelp)
		return err
	}
	if a.cmd == "adm release extract" {
		return errors.New("adm release extract: the lab has no real release binaries (openshift-install would generate a real cluster); the stand-in payload stops the lab at the install call")
	}
	var mirrors []release.Mirror
	for _, f := range []struct {
		path string
		icsp bool
	}{{a.idmsFile, false}, {a.icspFile, true}} {
		m, err := mirrorsFile(f.path, f.icsp)
		if err != nil {
			return err
		}
		mirrors = append(mirrors, m...)
	}
	c, err := release.New(release.Options{Mirrors: mirrors})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	r, err := c.Resolve(ctx, a.image)
	if err != nil {
		return fmt.Errorf("error: unable to read image %s: %w", a.image, err)
	}
	switch {
	case a.cmd == "image info":
		if a.output != "json" {
			return fmt.Errorf("image info: only --output json is supported, not %q", a.output)
		}
		goarch, ok := arch.Go(r.Arch)
		if !ok {
			return fmt.Errorf("image info: %s is a %s payload", a.image, r.Arch)
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"name": a.image, "digest": r.Digest,
			"config": map[string]any{"architecture": goarch, "os": "linux"}})
	case a.imageFor != "":
		img, ok := r.Components[a.imageFor]
		if !ok {
			return fmt.Errorf("error: no image tag %q exists in the release image %s", a.imageFor, a.image)
		}
		_, err := io.WriteString(stdout, img)
		return err
	case a.output == "template":
		// The service passes the template with its single quotes (the
		// command line is split on spaces, never through a shell) and trims
		// them from the answer.
		t := strings.Trim(a.template, "'")
		if t != "{{.metadata.version}}" {
			return fmt.Errorf("adm release info: the stand-in only renders the template {{.metadata.version}}, not %q", a.template)
		}
		_, err := io.WriteString(stdout, strings.Replace(a.template, t, r.Version, 1))
		return err
	}
	return fmt.Errorf("adm release info: the stand-in answers --image-for or -o template only")
}
