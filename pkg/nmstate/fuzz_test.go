package nmstate

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// checkINI is a deliberately independent keyfile checker: it fails unless
// content is "[section]" headers and "key=value" lines, sections separated
// by exactly one blank line, no key before the first header, no duplicate
// key in a section, no empty value, and exactly one trailing "\n".
func checkINI(content []byte) error {
	s := string(content)
	if !strings.HasSuffix(s, "\n") || strings.HasSuffix(s, "\n\n") {
		return fmt.Errorf("must end in exactly one newline")
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	var keys map[string]bool
	for i, l := range lines {
		switch {
		case l == "":
			if i == 0 || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "[") || lines[i-1] == "" {
				return fmt.Errorf("line %d: blank line not between sections", i+1)
			}
		case strings.HasPrefix(l, "["):
			if !strings.HasSuffix(l, "]") || len(l) < 3 || strings.ContainsAny(l[1:len(l)-1], "[]") {
				return fmt.Errorf("line %d: bad header %q", i+1, l)
			}
			if i > 0 && lines[i-1] != "" {
				return fmt.Errorf("line %d: header not preceded by a blank line", i+1)
			}
			keys = map[string]bool{}
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok || k == "" || v == "" || keys == nil {
				return fmt.Errorf("line %d: bad key line %q", i+1, l)
			}
			if keys[k] {
				return fmt.Errorf("line %d: duplicate key %q", i+1, k)
			}
			keys[k] = true
		}
	}
	if !strings.HasPrefix(lines[0], "[connection]") {
		return fmt.Errorf("first section must be [connection]")
	}
	return nil
}

func TestCheckINI(t *testing.T) {
	good := "[connection]\nid=a\n\n[bridge-port]\n"
	if err := checkINI([]byte(good)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"[connection]\nid=a", "[connection]\nid=a\n\n", "id=a\n", "[connection]\nid\n", "[connection]\nid=\n",
		"[connection]\nid=a\nid=b\n", "[connection]\n\n\n[x]\n", "[connection]\nid=a\n[x]\n", "[ipv4]\n"} {
		if checkINI([]byte(bad)) == nil {
			t.Errorf("checkINI accepted %q", bad)
		}
	}
}

func FuzzGenerate(f *testing.F) {
	for _, v := range loadVectors(f) {
		f.Add(v.input, false)
		f.Add(v.input, true)
	}
	f.Add([]byte("interfaces:\n- name: \"a\\nb\"\n"), true)
	f.Add([]byte("interfaces:\n- &a {name: eth0}\n- *a\n"), true)
	f.Add([]byte("dns-resolver: {config: {server: [\"fe80::1%eth0\"], search: [x]}}\ninterfaces: [{name: eth0, ipv6: {enabled: true}}]\n"), false)
	f.Add([]byte("apiVersion: v1beta1\nkind: AgentConfig\nhosts: []\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, lenient bool) {
		if err := CheckNotWrapped(data); err != nil && err.Error() == "" {
			t.Fatal("empty error message")
		}
		files, err := Generate(data, Options{Lenient: lenient})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		again, err := Generate(data, Options{Lenient: lenient})
		if err != nil || len(again) != len(files) {
			t.Fatalf("not deterministic: %v", err)
		}
		inst, err := Generate(data, Options{Lenient: lenient, Installer: true})
		if err != nil || len(inst) != len(files) {
			t.Fatalf("installer form failed where raw succeeded: %v", err)
		}
		var names []string
		for i, kf := range files {
			if !bytes.Equal(kf.Content, again[i].Content) {
				t.Fatalf("%s: output differs between runs", kf.Name)
			}
			if !strings.HasSuffix(kf.Name, ".nmconnection") || strings.Contains(kf.Name, "/") {
				t.Fatalf("bad file name %q", kf.Name)
			}
			if err := checkINI(kf.Content); err != nil {
				t.Fatalf("%s: not a valid keyfile: %v\n%s", kf.Name, err, kf.Content)
			}
			if err := checkINI(inst[i].Content); err != nil {
				t.Fatalf("installer %s: not a valid keyfile: %v\n%s", kf.Name, err, inst[i].Content)
			}
			if !bytes.Contains(inst[i].Content, []byte("\nautoconnect=true\n")) || !bytes.Contains(inst[i].Content, []byte("\nautoconnect-priority=1\n")) {
				t.Fatalf("installer %s lacks the autoconnect keys:\n%s", kf.Name, inst[i].Content)
			}
			names = append(names, kf.Name)
		}
		slices.Sort(names)
		if len(slices.Compact(names)) != len(files) && !lenient {
			t.Fatalf("duplicate file names in strict mode: %v", names)
		}
	})
}
