// Command linearizability-checker reads a recorded history of operations on versioned resources
// and checks with porcupine that some order of them, each taking effect at one instant between its
// call and its return, explains every answer. The history is JSON lines: first
// {"initial": {id: {"version", "data"}}}, then one {"client", "call", "return", "input", "output"}
// per operation (the types below; test/linearizability/checker.ts writes them).
//
// Exit codes: 0 linearizable; 1 not linearizable (the explanation on stderr); 2 unreadable input;
// 3 the check did not finish within -timeout.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Kinds of operation.
const (
	opRead  = "read"
	opWrite = "write"
	opBatch = "batch"
)

// Outcomes an answer can have.
const (
	statusOK       = "ok"
	statusConflict = "conflict"
	// The client cannot tell whether the operation took effect (a timeout, a 5xx, a reset connection).
	statusUnknown = "unknown"
)

// Item is one resource's part of a write or batch: replace its data at Version (0: at any version).
type Item struct {
	ID      string `json:"id"`
	Version int    `json:"version,omitempty"`
	Data    string `json:"data"`
}

// Input is what a client asked: a read of ID, a write of one item, or an all-or-nothing batch.
type Input struct {
	Op      string `json:"op"`
	ID      string `json:"id,omitempty"`
	Version int    `json:"version,omitempty"`
	Data    string `json:"data,omitempty"`
	Items   []Item `json:"items,omitempty"`
}

// Output is what the client saw: for a read the version and data; for a write or batch the new versions.
type Output struct {
	Status   string `json:"status"`
	Version  int    `json:"version,omitempty"`
	Data     string `json:"data,omitempty"`
	Versions []int  `json:"versions,omitempty"`
}

// Record is one line of the history: an operation, or (once, first) the resources' initial state.
type Record struct {
	Initial map[string]Resource `json:"initial,omitempty"`
	Client  int                 `json:"client"`
	Call    int64               `json:"call"`
	Return  int64               `json:"return"`
	Input   *Input              `json:"input,omitempty"`
	Output  *Output             `json:"output,omitempty"`
}

// Resource is a resource's version and data.
type Resource struct {
	Version int    `json:"version"`
	Data    string `json:"data"`
}

// State is every resource's current version and data: those written since the initial state in
// changed, the others as in base (shared by all states, never modified). Steps copy changed only,
// so a state costs what its own group of resources costs, however many the history holds.
type State struct {
	base    map[string]Resource
	changed map[string]Resource
}

func (s State) get(id string) (Resource, bool) {
	if r, ok := s.changed[id]; ok {
		return r, true
	}
	r, ok := s.base[id]
	return r, ok
}

func (s State) with(items []Item) State {
	next := State{base: s.base, changed: make(map[string]Resource, len(s.changed)+len(items))}
	for id, r := range s.changed {
		next.changed[id] = r
	}
	for _, item := range items {
		current, _ := s.get(item.ID)
		next.changed[item.ID] = Resource{Version: current.Version + 1, Data: item.Data}
	}
	return next
}

// applies says whether every item's expected version is the current one.
func (s State) applies(items []Item) bool {
	for _, item := range items {
		current, exists := s.get(item.ID)
		if !exists || (item.Version != 0 && item.Version != current.Version) {
			return false
		}
	}
	return true
}

func sortedIDs(resources map[string]Resource) []string {
	ids := make([]string, 0, len(resources))
	for id := range resources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (in Input) items() []Item {
	if in.Op == opBatch {
		return in.Items
	}
	return []Item{{ID: in.ID, Version: in.Version, Data: in.Data}}
}

// step is the sequential specification of a versioned resource store.
//
// An operation whose outcome is unknown takes effect when its versions match and does nothing
// otherwise. That covers both "it happened" and "it did not": its return time is infinite, so the
// checker may always place it after every other operation, where it changes nothing observed.
func step(state State, in Input, out Output) (bool, State) {
	if in.Op == opRead {
		if out.Status == statusUnknown {
			return true, state
		}
		current, exists := state.get(in.ID)
		return exists && out.Status == statusOK && current == Resource{Version: out.Version, Data: out.Data}, state
	}
	items := in.items()
	applies := state.applies(items)
	switch out.Status {
	case statusUnknown:
		if applies {
			return true, state.with(items)
		}
		return true, state
	case statusConflict:
		return !applies, state
	case statusOK:
		if !applies || len(out.Versions) != len(items) {
			return false, state
		}
		for i, item := range items {
			if current, _ := state.get(item.ID); out.Versions[i] != current.Version+1 {
				return false, state
			}
		}
		return true, state.with(items)
	}
	return false, state
}

// equalStates compares what was written: two states of one history share their base.
func equalStates(a, b State) bool {
	if len(a.changed) != len(b.changed) {
		return false
	}
	for id, r := range a.changed {
		if other, exists := b.changed[id]; !exists || other != r {
			return false
		}
	}
	return true
}

func hashState(state State) uint64 {
	h := fnv.New64a()
	for _, id := range sortedIDs(state.changed) {
		r := state.changed[id]
		h.Write([]byte(id))
		h.Write([]byte{0, byte(r.Version), byte(r.Version >> 8), byte(r.Version >> 16), byte(r.Version >> 24), 0})
		h.Write([]byte(r.Data))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// describeState names the resources written so far; the others are as the history began.
func describeState(state State) string {
	if len(state.changed) == 0 {
		return "{as initially}"
	}
	return describeResources(state.changed)
}

func describeResources(resources map[string]Resource) string {
	parts := make([]string, 0, len(resources))
	for _, id := range sortedIDs(resources) {
		parts = append(parts, fmt.Sprintf("%s: v%d %q", short(id), resources[id].Version, resources[id].Data))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func describeOperation(in Input, out Output) string {
	var call string
	switch in.Op {
	case opRead:
		call = fmt.Sprintf("read(%s)", short(in.ID))
	case opWrite:
		call = "write(" + describeItem(Item{ID: in.ID, Version: in.Version, Data: in.Data}) + ")"
	default:
		parts := make([]string, len(in.Items))
		for i, item := range in.Items {
			parts[i] = describeItem(item)
		}
		call = "batch(" + strings.Join(parts, "; ") + ")"
	}
	switch {
	case out.Status != statusOK:
		return call + " -> " + out.Status
	case in.Op == opRead:
		return fmt.Sprintf("%s -> v%d %q", call, out.Version, out.Data)
	default:
		return fmt.Sprintf("%s -> ok %v", call, out.Versions)
	}
}

func describeItem(item Item) string {
	at := "any version"
	if item.Version != 0 {
		at = fmt.Sprintf("at v%d", item.Version)
	}
	return fmt.Sprintf("%s %s := %q", short(item.ID), at, item.Data)
}

// short is the first 8 characters of an id: enough to tell a history's few resources apart.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func model(initial map[string]Resource) porcupine.Model {
	return porcupine.Model{
		Init: func() interface{} { return State{base: initial, changed: map[string]Resource{}} },
		Step: func(state, input, output interface{}) (bool, interface{}) {
			return step(state.(State), input.(Input), output.(Output))
		},
		Equal: func(a, b interface{}) bool { return equalStates(a.(State), b.(State)) },
		Hash:  func(state interface{}) uint64 { return hashState(state.(State)) },
		DescribeOperation: func(input, output interface{}) string {
			return describeOperation(input.(Input), output.(Output))
		},
		Partition:                 partition,
		DescribeState:             func(state interface{}) string { return describeState(state.(State)) },
		DescribeOperationMetadata: func(line interface{}) string { return fmt.Sprintf("history line %d", line) },
	}
}

// readHistory parses the JSON lines and checks each record names what the model needs.
func readHistory(r io.Reader) (map[string]Resource, []porcupine.Operation, error) {
	var initial map[string]Resource
	var ops []porcupine.Operation
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; scanner.Scan(); line++ {
		text := strings.TrimSpace(scanner.Text())
		if text == "" {
			continue
		}
		decoder := json.NewDecoder(strings.NewReader(text))
		decoder.DisallowUnknownFields()
		var record Record
		if err := decoder.Decode(&record); err != nil {
			return nil, nil, fmt.Errorf("line %d: %v", line, err)
		}
		if record.Initial != nil {
			if initial != nil || len(ops) > 0 {
				return nil, nil, fmt.Errorf("line %d: the initial state must come once, before the operations", line)
			}
			initial = record.Initial
			continue
		}
		if err := validate(record); err != nil {
			return nil, nil, fmt.Errorf("line %d: %v", line, err)
		}
		ret := record.Return
		if record.Output.Status == statusUnknown {
			// It may take effect at any time after its call, even after the client gave up
			// (boundAmbiguous narrows that where the history allows).
			ret = math.MaxInt64
		}
		ops = append(ops, porcupine.Operation{ClientId: record.Client, Input: *record.Input, Call: record.Call, Output: *record.Output, Return: ret, Metadata: line})
	}
	if err := scanner.Err(); err != nil {
		return nil, nil, err
	}
	if initial == nil {
		return nil, nil, fmt.Errorf("no initial state: the first line must be {\"initial\": {id: {version, data}}}")
	}
	for i, op := range ops {
		for _, item := range op.Input.(Input).items() {
			if _, known := initial[item.ID]; !known {
				return nil, nil, fmt.Errorf("operation %d names resource %q, which the initial state lacks", i+1, item.ID)
			}
		}
	}
	return initial, boundAmbiguous(ops), nil
}

// boundAmbiguous ends the interval of an ambiguous write or batch at versions named (each item's
// expected version) once an answer has shown one of its resources past that version: from then on
// it can only do nothing, so it must be placed by then either way. Without these bounds every
// ambiguous operation stays open to the end, and the search grows with their number.
func boundAmbiguous(ops []porcupine.Operation) []porcupine.Operation {
	type seen struct {
		at      int64
		version int
	}
	observed := map[string][]seen{}
	for _, op := range ops {
		in, out := op.Input.(Input), op.Output.(Output)
		if out.Status != statusOK {
			continue
		}
		if in.Op == opRead {
			observed[in.ID] = append(observed[in.ID], seen{op.Return, out.Version})
			continue
		}
		for i, item := range in.items() {
			observed[item.ID] = append(observed[item.ID], seen{op.Return, out.Versions[i]})
		}
	}
	for i, op := range ops {
		in := op.Input.(Input)
		if op.Output.(Output).Status != statusUnknown || in.Op == opRead {
			continue
		}
		bound := int64(math.MaxInt64)
		for _, item := range in.items() {
			if item.Version == 0 {
				// At any version it can take effect whenever it is placed: only the end is safe.
				bound = math.MaxInt64
				break
			}
			for _, s := range observed[item.ID] {
				if s.version > item.Version && s.at < bound {
					bound = s.at
				}
			}
		}
		if bound == math.MaxInt64 {
			continue
		}
		// One past the answer, so that the answer can be placed first even at an equal time.
		ops[i].Return = max(bound+1, op.Call)
	}
	return ops
}

func validate(record Record) error {
	in, out := record.Input, record.Output
	if in == nil || out == nil {
		return fmt.Errorf("an operation needs both input and output")
	}
	if record.Client < 0 {
		return fmt.Errorf("client must not be negative")
	}
	switch out.Status {
	case statusOK, statusConflict, statusUnknown:
	default:
		return fmt.Errorf("output status %q is none of ok, conflict, unknown", out.Status)
	}
	if out.Status != statusUnknown && record.Return < record.Call {
		return fmt.Errorf("returns (%d) before its call (%d)", record.Return, record.Call)
	}
	switch in.Op {
	case opRead:
		if in.ID == "" {
			return fmt.Errorf("a read needs an id")
		}
		if out.Status == statusConflict {
			return fmt.Errorf("a read cannot conflict")
		}
	case opWrite:
		if in.ID == "" {
			return fmt.Errorf("a write needs an id")
		}
	case opBatch:
		if len(in.Items) == 0 {
			return fmt.Errorf("a batch needs items")
		}
		seen := map[string]bool{}
		for _, item := range in.Items {
			if item.ID == "" || seen[item.ID] {
				return fmt.Errorf("each batch item needs an id of its own")
			}
			seen[item.ID] = true
		}
	default:
		return fmt.Errorf("op %q is none of read, write, batch", in.Op)
	}
	return nil
}

// partition splits the history into groups of resources no batch joins, each checked on its own
// (porcupine's P-compositionality): an operation belongs to the group of the resources it names.
func partition(ops []porcupine.Operation) [][]porcupine.Operation {
	parent := map[string]string{}
	var find func(id string) string
	find = func(id string) string {
		if p, ok := parent[id]; ok && p != id {
			root := find(p)
			parent[id] = root
			return root
		}
		parent[id] = id
		return id
	}
	for _, op := range ops {
		items := op.Input.(Input).items()
		if op.Input.(Input).Op == opRead {
			items = []Item{{ID: op.Input.(Input).ID}}
		}
		for _, item := range items[1:] {
			parent[find(item.ID)] = find(items[0].ID)
		}
	}
	index := map[string]int{}
	var groups [][]porcupine.Operation
	for _, op := range ops {
		root := find(resourceOf(op))
		i, known := index[root]
		if !known {
			i = len(groups)
			index[root] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], op)
	}
	return groups
}

func resourceOf(op porcupine.Operation) string {
	in := op.Input.(Input)
	if in.Op == opBatch {
		return in.Items[0].ID
	}
	return in.ID
}

// explain names, for a group of resources whose operations no order explains, the longest order
// found that explains some of them, the state it ends in, and the operations that could have come
// next but whose answers that state contradicts.
func explain(info porcupine.LinearizationInfo, groups [][]porcupine.Operation, initial map[string]Resource) string {
	var b strings.Builder
	for g, partials := range info.PartialLinearizationsOperations() {
		ops := groups[g]
		var longest []porcupine.Operation
		for _, order := range partials {
			if len(order) > len(longest) {
				longest = order
			}
		}
		if len(longest) == len(ops) {
			continue
		}
		state := State{base: initial, changed: map[string]Resource{}}
		done := map[int]bool{}
		for _, op := range longest {
			_, state = step(state, op.Input.(Input), op.Output.(Output))
			done[op.Metadata.(int)] = true
		}
		mine := map[string]Resource{}
		for _, op := range ops {
			for _, item := range op.Input.(Input).items() {
				mine[item.ID], _ = state.get(item.ID)
			}
		}
		names := make([]string, 0, len(mine))
		for _, id := range sortedIDs(mine) {
			names = append(names, short(id))
		}
		fmt.Fprintf(&b, "not linearizable: no order of the %d operations on %s explains every answer.\n", len(ops), strings.Join(names, ", "))
		fmt.Fprintf(&b, "The longest explained prefix has %d operations and ends in state %s.\n", len(longest), describeResources(mine))
		// The candidates to come next: every operation left that was called before the earliest return among those left.
		firstReturn := int64(math.MaxInt64)
		for _, op := range ops {
			if !done[op.Metadata.(int)] && op.Return < firstReturn {
				firstReturn = op.Return
			}
		}
		b.WriteString("None of these, which could come next, fits that state:\n")
		for _, op := range ops {
			if done[op.Metadata.(int)] || op.Call > firstReturn || op.Output.(Output).Status == statusUnknown {
				continue
			}
			fmt.Fprintf(&b, "  line %d: client %d, %s (called %d, returned %d)\n", op.Metadata, op.ClientId, describeOperation(op.Input.(Input), op.Output.(Output)), op.Call, op.Return)
		}
	}
	return b.String()
}

func main() {
	visualization := flag.String("visualize", "", "on a violation, write porcupine's HTML visualisation to this file")
	timeout := flag.Duration("timeout", time.Minute, "give up (exit code 3) after this long")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: %s [-visualize file.html] [-timeout 1m] [history.jsonl]\nReads standard input without a file.\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 1 {
		flag.Usage()
		os.Exit(2)
	}
	input := io.Reader(os.Stdin)
	name := "standard input"
	if flag.NArg() == 1 {
		name = flag.Arg(0)
		file, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(os.Stderr, "cannot read the history: %v\n", err)
			os.Exit(2)
		}
		defer file.Close()
		input = file
	}
	initial, ops, err := readHistory(input)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot read the history in %s: %v\n", name, err)
		os.Exit(2)
	}
	m := model(initial)
	started := time.Now()
	result, info := porcupine.CheckOperationsVerbose(m, ops, *timeout)
	elapsed := time.Since(started).Round(time.Millisecond)
	switch result {
	case porcupine.Ok:
		fmt.Printf("linearizable: %d operations on %d resources, checked in %s\n", len(ops), len(initial), elapsed)
	case porcupine.Unknown:
		fmt.Fprintf(os.Stderr, "undecided: %d operations not checked within %s\n", len(ops), *timeout)
		os.Exit(3)
	default:
		fmt.Fprint(os.Stderr, explain(info, partition(ops), initial))
		if *visualization != "" {
			if err := porcupine.VisualizePath(m, info, *visualization); err != nil {
				fmt.Fprintf(os.Stderr, "could not write the visualisation: %v\n", err)
			} else {
				fmt.Fprintf(os.Stderr, "Visualisation: %s\n", *visualization)
			}
		}
		os.Exit(1)
	}
}
