package live

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Console markers printed by the live fixture (hack/build-live-fixture.sh).
const (
	initrdFailed = "LIVE-INITRD-FAILED:"
	reportBegin  = "LIVE-REPORT-BEGIN "
	reportEnd    = "LIVE-REPORT-END "
)

// UnitState is one line of `systemctl list-units`.
type UnitState struct {
	Load, Active, Sub string
}

// Addr is one address of an interface, from `ip -j addr`.
type Addr struct {
	Family    string `json:"family"`
	Local     string `json:"local"`
	PrefixLen int    `json:"prefixlen"`
}

// Link is one interface from `ip -j addr`.
type Link struct {
	Name string `json:"ifname"`
	MAC  string `json:"address"`
	// PermAddr is the NIC's own MAC when it differs from the current one
	// (a bond port carries the bond's MAC).
	PermAddr string `json:"permaddr"`
	Master   string `json:"master"`
	LinkInfo *struct {
		Kind string `json:"info_kind"`
	} `json:"linkinfo"`
	Addrs []Addr `json:"addr_info"`
}

// Report is one LIVE-REPORT block: the state of a host at one moment.
type Report struct {
	Seq        int
	Hostname   string
	Links      []Link
	Units      map[string]UnitState
	Failed     []string
	Restarts   map[string]int      // unit -> NRestarts, for units restarted at least once
	Journal    map[string][]string // failed or restarted unit -> its last journal lines
	Logs       map[string][]string // agent unit -> its last journal lines
	CLogs      map[string][]string // container name -> the last lines it printed
	Images     []string            // "repository@digest tag"
	Containers []string            // "name status image"
	Standins   []string            // calls logged by the RHCOS stand-ins
	Node0      bool
}

// InitrdFailure returns the initramfs failure line, if the console has one.
func InitrdFailure(console []byte) string {
	i := bytes.Index(console, []byte(initrdFailed))
	if i < 0 {
		return ""
	}
	line := console[i:]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	return strings.TrimSpace(string(line))
}

// ParseReports returns every complete report, oldest first. A block cut off
// by the end of the output (or by another block) is ignored, and so is a
// damaged one; the error says why a damaged block was dropped when no
// report at all could be read.
func ParseReports(console []byte) ([]Report, error) {
	var out []Report
	var cur *Report
	var bad error
	sc := bufio.NewScanner(bytes.NewReader(console))
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		// The kernel or systemd may write to the same console: markers
		// are matched anywhere on the line.
		if i := strings.Index(line, reportBegin); i >= 0 {
			seq, err := strconv.Atoi(strings.TrimSpace(line[i+len(reportBegin):]))
			if err != nil {
				cur = nil
				continue
			}
			cur = &Report{Seq: seq, Units: map[string]UnitState{}, Restarts: map[string]int{}, Journal: map[string][]string{}, Logs: map[string][]string{}, CLogs: map[string][]string{}}
			continue
		}
		if cur == nil {
			continue
		}
		if i := strings.Index(line, reportEnd); i >= 0 {
			if seq, err := strconv.Atoi(strings.TrimSpace(line[i+len(reportEnd):])); err == nil && seq == cur.Seq {
				out = append(out, *cur)
			}
			cur = nil
			continue
		}
		key, rest, _ := strings.Cut(line, " ")
		switch key {
		case "HOSTNAME":
			cur.Hostname = rest
		case "IPADDR":
			if strings.TrimSpace(rest) == "" {
				continue
			}
			var links []Link
			if err := json.Unmarshal([]byte(rest), &links); err != nil {
				bad = fmt.Errorf("report %d: ip -j addr: %w", cur.Seq, err)
				cur = nil // a damaged block is not a report
				continue
			}
			cur.Links = links
		case "UNIT":
			f := strings.Fields(rest)
			if len(f) == 4 {
				cur.Units[f[0]] = UnitState{Load: f[1], Active: f[2], Sub: f[3]}
			}
		case "FAILED":
			cur.Failed = append(cur.Failed, rest)
		case "RESTARTS":
			f := strings.Fields(rest)
			if len(f) == 2 {
				if n, err := strconv.Atoi(f[1]); err == nil {
					cur.Restarts[f[0]] = n
				}
			}
		case "LOG":
			unit, msg, _ := strings.Cut(rest, " ")
			cur.Logs[unit] = append(cur.Logs[unit], msg)
		case "CLOG":
			c, msg, _ := strings.Cut(rest, " ")
			cur.CLogs[c] = append(cur.CLogs[c], msg)
		case "JOURNAL":
			unit, msg, _ := strings.Cut(rest, " ")
			cur.Journal[unit] = append(cur.Journal[unit], msg)
		case "IMAGE":
			cur.Images = append(cur.Images, rest)
		case "CONTAINER":
			cur.Containers = append(cur.Containers, rest)
		case "STANDIN":
			cur.Standins = append(cur.Standins, rest)
		case "NODE0":
			cur.Node0 = rest == "yes"
		}
	}
	if err := sc.Err(); err != nil {
		return out, err
	}
	if len(out) == 0 && bad != nil {
		return nil, bad
	}
	return out, nil
}

// Last returns the newest complete report, or nil.
func Last(reports []Report) *Report {
	if len(reports) == 0 {
		return nil
	}
	return &reports[len(reports)-1]
}

// HasMAC reports whether mac (case-insensitive) is the link's current or
// permanent address.
func (l *Link) HasMAC(mac string) bool {
	return strings.EqualFold(l.MAC, mac) || strings.EqualFold(l.PermAddr, mac)
}

// LinkByMAC returns the interface that is not a port of another and whose
// current or permanent MAC is mac, or nil.
func (r *Report) LinkByMAC(mac string) *Link {
	for i := range r.Links {
		if r.Links[i].HasMAC(mac) && r.Links[i].Master == "" {
			return &r.Links[i]
		}
	}
	return nil
}

// LinkByName returns the interface with the given name, or nil.
func (r *Report) LinkByName(name string) *Link {
	for i := range r.Links {
		if r.Links[i].Name == name {
			return &r.Links[i]
		}
	}
	return nil
}

// HasAddr reports whether l holds ip/prefix.
func (l *Link) HasAddr(ip string, prefix int) bool {
	for _, a := range l.Addrs {
		if a.Local == ip && a.PrefixLen == prefix {
			return true
		}
	}
	return false
}

// Kind is the link's kind (bond, vlan, ...), or "" for a plain NIC.
func (l *Link) Kind() string {
	if l.LinkInfo == nil {
		return ""
	}
	return l.LinkInfo.Kind
}

// Broken lists the failed units and the units systemd had to restart.
func (r *Report) Broken() []string {
	seen := map[string]bool{}
	var out []string
	for _, u := range r.Failed {
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	for u := range r.Restarts {
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	sort.Strings(out)
	return out
}

// FailedSummary prints each failed or restarted unit with its journal, for
// an error message.
func (r *Report) FailedSummary() string {
	var b strings.Builder
	for _, u := range r.Broken() {
		state := "failed"
		if n := r.Restarts[u]; n > 0 {
			state = fmt.Sprintf("restarted %d times", n)
			if slices.Contains(r.Failed, u) {
				state = "failed, " + state
			}
		}
		fmt.Fprintf(&b, "unit %s %s; journalctl -u %s:\n", u, state, u)
		for _, l := range r.Journal[u] {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	if len(r.Broken()) > 0 {
		names := make([]string, 0, len(r.CLogs))
		for c := range r.CLogs {
			names = append(names, c)
		}
		sort.Strings(names)
		for _, c := range names {
			fmt.Fprintf(&b, "container %s printed:\n", c)
			for _, l := range r.CLogs[c] {
				fmt.Fprintf(&b, "    %s\n", l)
			}
		}
	}
	return b.String()
}
