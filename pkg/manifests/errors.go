package manifests

import (
	"errors"
	"fmt"
	"strings"
)

// Error types, in the spirit of Kubernetes field errors.
const (
	TypeRequired    = "Required value"
	TypeInvalid     = "Invalid value"
	TypeUnsupported = "Unsupported value"
	TypeForbidden   = "Forbidden"
	TypeDuplicate   = "Duplicate value"
	TypeUnknown     = "Unknown field"
	TypeTooMany     = "Too many"
)

// FieldError is one problem with one field of one input file.
type FieldError struct {
	File   string
	Line   int
	Path   string
	Type   string
	Value  any // nil when there is no value worth showing
	Detail string
}

func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(locate(e.File, e.Line))
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Type)
	if e.Value != nil {
		switch v := e.Value.(type) {
		case string:
			fmt.Fprintf(&b, ": %q", v)
		default:
			fmt.Fprintf(&b, ": %v", v)
		}
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// FileError is a problem with a whole file (unreadable, not YAML, ...).
type FileError struct {
	File string
	Line int
	Msg  string
}

func (e *FileError) Error() string { return locate(e.File, e.Line) + e.Msg }

// ErrorList collects every validation problem so they are all shown at once.
type ErrorList []*FieldError

func (l ErrorList) Error() string {
	if len(l) == 1 {
		return l[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problems found:", len(l))
	for i, e := range l {
		if i == MaxErrorsShown {
			fmt.Fprintf(&b, "\n  ... and %d more problems not shown; fix these and run again", len(l)-i)
			break
		}
		b.WriteString("\n  - ")
		b.WriteString(e.Error())
	}
	return b.String()
}

// MaxErrorsShown caps the problems one error lists: thousands of findings
// (a generated file gone wrong) would bury the first, usually the cause.
const MaxErrorsShown = 50

// errs is a small builder used by validators: it knows the file and the
// line map so each error can point at the right place.
type errs struct {
	file  string
	lines Lines
	list  ErrorList
}

func newErrs(file string, lines Lines) *errs { return &errs{file: file, lines: lines} }

func (e *errs) add(path, typ string, value any, detail string, args ...any) {
	if len(args) > 0 {
		detail = fmt.Sprintf(detail, args...)
	}
	e.list = append(e.list, &FieldError{File: e.file, Line: e.lines.Line(path), Path: path, Type: typ, Value: value, Detail: detail})
}

func (e *errs) required(path, detail string, args ...any) {
	e.add(path, TypeRequired, nil, detail, args...)
}
func (e *errs) invalid(path string, v any, detail string, args ...any) {
	e.add(path, TypeInvalid, v, detail, args...)
}
func (e *errs) forbidden(path, detail string, args ...any) {
	e.add(path, TypeForbidden, nil, detail, args...)
}
func (e *errs) unsupported(path string, v any, supported ...string) {
	q := make([]string, len(supported))
	for i, s := range supported {
		q[i] = fmt.Sprintf("%q", s)
	}
	e.add(path, TypeUnsupported, v, "supported values: %s", strings.Join(q, ", "))
}

// where renders the place of path in e's file: "file:line path", or
// "file path" when the line is not known.
func (e *errs) where(path string) string {
	return strings.TrimSuffix(locate(e.file, e.lines.Line(path)), ": ") + " " + path
}

func (e *errs) err() error {
	if len(e.list) == 0 {
		return nil
	}
	return e.list
}

// OrNil returns nil for an empty list, so callers can return it as an error.
func (l ErrorList) OrNil() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// IsConfigError reports whether err is (or wraps) a problem in the user's
// configuration files: a FieldError, a FileError or a list of them, as
// opposed to, say, a registry that cannot be reached.
func IsConfigError(err error) bool {
	var l ErrorList
	var f *FieldError
	var fe *FileError
	return errors.As(err, &l) || errors.As(err, &f) || errors.As(err, &fe)
}
