package manifests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/seed-a052040e/agentiso/internal/suggest"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// Warning is a non-fatal finding about an input file: a field spelled in a
// non-canonical case, a field that is accepted but ignored, and so on.
type Warning struct {
	File string
	Line int
	Path string
	Msg  string
}

func (w Warning) String() string {
	return locate(w.File, w.Line) + w.Path + ": " + w.Msg
}

func locate(file string, line int) string {
	switch {
	case file == "":
		return ""
	case line > 0:
		return fmt.Sprintf("%s:%d: ", file, line)
	default:
		return file + ": "
	}
}

// Lines maps a field path (as used in error messages, e.g.
// "hosts[0].interfaces[1].macAddress") to its line in the source file.
type Lines map[string]int

// Line returns the line of path, or of its closest known ancestor.
func (l Lines) Line(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if n, ok := l[p]; ok {
			return n
		}
	}
	return 0
}

func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i <= 0 {
		return ""
	}
	return p[:i]
}

// Decoded carries what strict decoding learned beyond the value itself.
type Decoded struct {
	Lines    Lines
	Warnings []Warning
}

// rawType marks fields whose content is free-form (kept as-is, checked elsewhere).
var rawType = reflect.TypeOf(json.RawMessage(nil))

// DecodeStrict decodes one YAML document into out (a pointer to a struct).
// Unknown fields are errors naming file, line and field, with a "did you
// mean" suggestion; fields matched only case-insensitively are accepted
// with a warning that names the canonical spelling.
func DecodeStrict(file string, data []byte, out any) (*Decoded, error) {
	doc, err := ParseDocument(file, data)
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, &FileError{File: file, Msg: "file is empty"}
	}
	return decodeNode(file, doc, out)
}

// ParseDocument parses data as a single YAML document, with the limits and
// the "file:line: ..." errors of DecodeStrict, for callers that walk the
// nodes themselves. A file without a document (empty, or only comments)
// gives a nil node and no error.
func ParseDocument(file string, data []byte) (*yaml3.Node, error) {
	if err := checkYAMLSize(file, data); err != nil {
		return nil, err
	}
	var doc yaml3.Node
	dec := yaml3.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, yamlSyntaxError(file, data, err)
	}
	if err := checkYAMLDepth(file, &doc); err != nil {
		return nil, err
	}
	var extra yaml3.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &FileError{File: file, Line: extra.Line, Msg: "holds more than one YAML document; only one is allowed here"}
	}
	return &doc, nil
}

// DecodeStrictAll decodes a multi-document YAML stream, calling newOut for
// each non-empty document.
func DecodeStrictAll(file string, data []byte, newOut func() any) ([]any, []*Decoded, error) {
	if err := checkYAMLSize(file, data); err != nil {
		return nil, nil, err
	}
	dec := yaml3.NewDecoder(bytes.NewReader(data))
	var outs []any
	var infos []*Decoded
	for {
		var doc yaml3.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, yamlSyntaxError(file, data, err)
		}
		if err := checkYAMLDepth(file, &doc); err != nil {
			return nil, nil, err
		}
		if len(doc.Content) == 0 || (doc.Content[0].Kind == yaml3.ScalarNode && doc.Content[0].Tag == "!!null") {
			continue
		}
		out := newOut()
		info, err := decodeNode(file, &doc, out)
		if err != nil {
			return nil, nil, err
		}
		outs = append(outs, out)
		infos = append(infos, info)
	}
	if len(outs) == 0 {
		return nil, nil, &FileError{File: file, Msg: "file holds no YAML document"}
	}
	return outs, infos, nil
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// yamlSyntaxError turns a parser error into "file:line: not valid YAML: ...".
// For "did not find expected key" the parser names the line where the
// mapping it gave up on starts; the line that broke it is usually a later
// one indented to no level above it, which is named instead when found.
func yamlSyntaxError(file string, data []byte, err error) error {
	msg := err.Error()
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if line > 0 && msg == "did not find expected key" {
		if l, ind, levels, ok := misindented(data, line); ok {
			strs := make([]string, len(levels))
			for i, v := range levels {
				strs[i] = strconv.Itoa(v)
			}
			return &FileError{File: file, Line: l, Msg: fmt.Sprintf("not valid YAML: %s: this line is indented %d spaces, which matches no level above it (%s)", msg, ind, strings.Join(strs, ", "))}
		}
	}
	return &FileError{File: file, Line: line, Msg: "not valid YAML: " + msg}
}

// misindented finds the first line from line from (1-based) on whose
// indentation is none of the levels of the lines before it: each line's
// own, and for a sequence item ("- ") its content's column. Blank lines,
// comments and block scalars' text are not levels. ok is false when every
// line lines up (the error is then something else).
func misindented(data []byte, from int) (line, indent int, levels []int, ok bool) {
	seen := map[int]bool{}
	scalarAbove := -1 // inside a block scalar: lines indented deeper than this
	prevInd, prevOpens := -1, false
	for i, raw := range strings.Split(string(data), "\n") {
		n := i + 1
		l := strings.TrimRight(raw, " \t\r")
		t := strings.TrimLeft(l, " ")
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		ind := len(l) - len(t)
		if scalarAbove >= 0 {
			if ind > scalarAbove {
				continue
			}
			scalarAbove = -1
		}
		// A deeper line under a key that opens a block is a new level.
		opensLevel := ind > prevInd && prevOpens
		if n > from && !seen[ind] && !opensLevel {
			for k := range seen {
				levels = append(levels, k)
			}
			slices.Sort(levels)
			return n, ind, levels, true
		}
		seen[ind] = true
		prevInd, prevOpens = ind, strings.HasSuffix(t, ":")
		for c := ind; strings.HasPrefix(t, "- "); {
			t = strings.TrimLeft(t[2:], " ")
			c = len(l) - len(t)
			seen[c] = true
		}
		if strings.HasSuffix(t, "|") || strings.HasSuffix(t, ">") || strings.HasSuffix(t, "|-") || strings.HasSuffix(t, ">-") || strings.HasSuffix(t, "|+") || strings.HasSuffix(t, ">+") {
			scalarAbove = ind
		}
	}
	return 0, 0, nil, false
}

func decodeNode(file string, doc *yaml3.Node, out any) (*Decoded, error) {
	root := doc
	if root.Kind == yaml3.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml3.MappingNode {
		return nil, &FileError{File: file, Line: root.Line, Msg: "expected a YAML mapping (key: value pairs) at the top level"}
	}
	w := &walker{file: file, info: &Decoded{Lines: Lines{}}}
	w.walk(root, reflect.TypeOf(out).Elem(), "")
	if len(w.errs) > 0 {
		return nil, w.errs
	}
	// sigs.k8s.io/yaml converts scalars to the target field's type.
	if err := yaml.Unmarshal(mustMarshalNode(doc), out); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			path := jsonFieldToPath(te.Field)
			return nil, ErrorList{{File: file, Line: w.info.Lines.Line(path), Path: path, Type: TypeInvalid,
				Detail: fmt.Sprintf("expected %s, got a %s", describeType(te.Type), te.Value)}}
		}
		return nil, &FileError{File: file, Msg: err.Error()}
	}
	return w.info, nil
}

func mustMarshalNode(n *yaml3.Node) []byte {
	b, err := yaml3.Marshal(n)
	if err != nil {
		// A node tree that yaml3 just parsed always re-marshals.
		return nil
	}
	return b
}

// jsonFieldToPath turns encoding/json's "hosts.0.role" into "hosts[0].role".
func jsonFieldToPath(f string) string {
	parts := strings.Split(f, ".")
	var b strings.Builder
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err == nil {
			b.WriteString("[" + p + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return t.String()
}

type walker struct {
	file string
	info *Decoded
	errs ErrorList
}

// walk checks node against type t, recording lines, unknown fields and
// case-insensitive matches. Type mismatches that encoding/json would
// report without list indices (so without a usable path or line) are
// reported here; the rest are left to encoding/json.
func (w *walker) walk(n *yaml3.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if path != "" {
		w.info.Lines[path] = n.Line
	}
	if n.Kind == yaml3.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if t == rawType || t.Kind() == reflect.Interface {
		w.recordLines(n, path)
		return
	}
	if t.Kind() == reflect.String && n.Kind == yaml3.ScalarNode && n.Tag != "!!null" && n.Tag != "!!str" {
		// Keep the text exactly as written (000000 stays "000000").
		n.Tag, n.Style = "!!str", yaml3.DoubleQuotedStyle
	}
	if got := scalarMismatch(n, t); got != "" {
		detail := fmt.Sprintf("expected %s, got a %s", describeType(t), got)
		if t.Kind() == reflect.String && n.Style&yaml3.FlowStyle != 0 {
			// {"auths": ...} unquoted is a YAML mapping: JSON text
			// (a pull secret) must be quoted.
			key := path[strings.LastIndexAny(path, ".]")+1:]
			detail += fmt.Sprintf(": JSON must be quoted here, in single quotes: %s: '{\"auths\": ...}'", key)
		}
		w.errs = append(w.errs, &FieldError{File: w.file, Line: n.Line, Path: path, Type: TypeInvalid, Detail: detail})
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml3.MappingNode {
			return
		}
		fields := structFields(t)
		w.checkDuplicates(n, path, true)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			name := k.Value
			child := joinPath(path, name)
			f, ok := fields[name]
			if !ok {
				if f2, canon, ok2 := matchFold(fields, name); ok2 {
					w.info.Warnings = append(w.info.Warnings, Warning{File: w.file, Line: k.Line, Path: child,
						Msg: fmt.Sprintf("field name matched case-insensitively; the canonical spelling is %q", canon)})
					f, ok = f2, true
					child = joinPath(path, canon)
				}
			}
			if !ok && !fieldLike(name) {
				// Not a misspelt field: likely a file that is not what the
				// user meant (a symlink to /etc/shadow...). Its content is
				// not echoed.
				w.errs = append(w.errs, &FieldError{File: w.file, Line: k.Line, Path: path, Type: TypeUnknown,
					Detail: fmt.Sprintf("a key of %d characters that is not a field name (not shown: is this the file you meant?)", utf8.RuneCountInString(name))})
				continue
			}
			if !ok {
				// The path ends in the name: the detail only suggests.
				msg := ""
				if s := suggest.Closest(name, fieldNames(fields)); s != "" {
					msg = fmt.Sprintf("did you mean %q?", s)
				} else if s := nestedField(t, name, 3); s != "" {
					// Given at the wrong level (machineNetwork at the top
					// of install-config.yaml): say where it belongs.
					msg = fmt.Sprintf("did you mean %q?", joinPath(path, s))
				}
				w.errs = append(w.errs, &FieldError{File: w.file, Line: k.Line, Path: child, Type: TypeUnknown, Detail: msg})
				continue
			}
			w.walk(v, f, child)
		}
	case reflect.Slice:
		if n.Kind != yaml3.SequenceNode || t.Elem().Kind() == reflect.Uint8 {
			return
		}
		for i, c := range n.Content {
			w.walk(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		if n.Kind != yaml3.MappingNode {
			return
		}
		w.checkDuplicates(n, path, false)
		for i := 0; i+1 < len(n.Content); i += 2 {
			w.walk(n.Content[i+1], t.Elem(), joinPath(path, n.Content[i].Value))
		}
	}
}

// checkDuplicates reports a key given twice in one mapping: YAML would keep
// only one of the values, silently (upstream's strict decoding refuses it).
// In a struct (fields), a key that is not a field name is not echoed.
func (w *walker) checkDuplicates(n *yaml3.Node, path string, fields bool) {
	if len(n.Content) < 4 {
		return
	}
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml3.ScalarNode {
			continue
		}
		if first, dup := seen[k.Value]; dup {
			if fields && !fieldLike(k.Value) {
				w.errs = append(w.errs, &FieldError{File: w.file, Line: k.Line, Path: path, Type: TypeInvalid,
					Detail: fmt.Sprintf("a key that is not a field name is given twice (first on line %d)", first)})
				continue
			}
			w.errs = append(w.errs, &FieldError{File: w.file, Line: k.Line, Path: joinPath(path, k.Value), Type: TypeInvalid,
				Detail: fmt.Sprintf("duplicate key %q (first given on line %d): only one value can be used; remove one", k.Value, first)})
			continue
		}
		seen[k.Value] = k.Line
	}
}

// recordLines notes the line of every node inside a free-form subtree, so
// errors found later (e.g. by the NMState parser) can point at the file.
func (w *walker) recordLines(n *yaml3.Node, path string) {
	if path != "" {
		w.info.Lines[path] = n.Line
	}
	switch n.Kind {
	case yaml3.MappingNode:
		w.checkDuplicates(n, path, false)
		for i := 0; i+1 < len(n.Content); i += 2 {
			w.recordLines(n.Content[i+1], joinPath(path, n.Content[i].Value))
		}
	case yaml3.SequenceNode:
		for i, c := range n.Content {
			w.recordLines(c, fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

// scalarMismatch returns what n holds ("number", "bool", "list",
// "mapping") when it can never decode into t, or "" when it may.
func scalarMismatch(n *yaml3.Node, t reflect.Type) string {
	got := ""
	switch {
	case n.Kind == yaml3.MappingNode:
		got = "mapping"
	case n.Kind == yaml3.SequenceNode:
		got = "list"
	case n.Kind == yaml3.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float"):
		got = "number"
	case n.Kind == yaml3.ScalarNode && n.Tag == "!!bool":
		got = "bool"
	default:
		return ""
	}
	switch t.Kind() {
	case reflect.String:
		// Like upstream's decoding, numbers and booleans are accepted as
		// text (serialNumber: 12345); only structure is a mismatch.
		if got == "mapping" || got == "list" {
			return got
		}
	case reflect.Struct, reflect.Map:
		if got != "mapping" {
			return got
		}
	case reflect.Slice:
		if got != "list" && t.Elem().Kind() != reflect.Uint8 {
			return got
		}
	}
	return ""
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// structFields maps JSON names to field types, flattening embedded structs.
// nestedField is the path, below struct t, of a field named name, looked
// for breadth-first up to depth levels down; "" when none (or when several
// at the same depth would make the answer a guess).
func nestedField(t reflect.Type, name string, depth int) string {
	type level struct {
		t    reflect.Type
		path string
	}
	cur := []level{{t, ""}}
	for d := 0; d < depth && len(cur) > 0; d++ {
		var next []level
		var found []string
		for _, l := range cur {
			for fname, ft := range structFields(l.t) {
				for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
					ft = ft.Elem()
				}
				p := joinPath(l.path, fname)
				if fname == name && d > 0 {
					found = append(found, p)
				}
				if ft.Kind() == reflect.Struct && ft != rawType {
					next = append(next, level{ft, p})
				}
			}
		}
		if len(found) == 1 {
			return found[0]
		}
		if len(found) > 1 {
			return ""
		}
		cur = next
	}
	return ""
}

func structFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range structFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func fieldNames(m map[string]reflect.Type) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func matchFold(fields map[string]reflect.Type, name string) (reflect.Type, string, bool) {
	for _, k := range fieldNames(fields) {
		if strings.EqualFold(k, name) {
			return fields[k], k, true
		}
	}
	return nil, "", false
}

// fieldNameRE is what a field name, or a misspelling of one, looks like.
var fieldNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`)

// fieldLike reports whether an unknown key may be echoed in an error: a
// field name or a typo of one, not a line of some other file.
func fieldLike(key string) bool { return fieldNameRE.MatchString(key) }
