package form

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/huh"

	"github.com/kvbench/kvbench/bench/sender"
	"github.com/kvbench/kvbench/config"
)

// format renders a field's value as the text a flag would take.
func format(f config.Field, c *config.Config) string {
	switch f.Kind {
	case config.Int:
		return strconv.Itoa(c.Int(f.Key))
	case config.Float:
		return strconv.FormatFloat(c.Float(f.Key), 'f', -1, 64)
	case config.Bool:
		return strconv.FormatBool(c.Bool(f.Key))
	case config.Duration:
		return c.Duration(f.Key).String()
	case config.IntList:
		l := c.IntList(f.Key)
		parts := make([]string, len(l))
		for i, n := range l {
			parts[i] = strconv.Itoa(n)
		}
		return strings.Join(parts, ",")
	case config.StringList:
		return strings.Join(c.StringList(f.Key), ",")
	}
	return c.String(f.Key)
}

// check validates text as the CLI would: the same parse and range errors.
func check(f config.Field) func(string) error {
	return func(s string) error {
		// Empty keeps the default the description shows.
		if strings.TrimSpace(s) == "" {
			return nil
		}
		if f.JSONObject {
			// Checked as typed, as the command line would refuse it.
			var obj map[string]any
			if err := json.Unmarshal([]byte(s), &obj); err != nil || obj == nil {
				return fmt.Errorf("--%s must be a JSON object, e.g. {\"chat_template_kwargs\":{\"enable_thinking\":false}}", f.Flag)
			}
		}
		v, err := config.Parse(f, s)
		if err != nil {
			return err
		}
		return f.Check(v)
	}
}

// checkEngineURL accepts `builtin` or what the client can normalise.
func checkEngineURL(s string) error {
	if strings.TrimSpace(s) == "builtin" {
		return nil
	}
	_, err := sender.NormalizeURL(s)
	return err
}

func field(key string) config.Field {
	f, ok := config.Lookup(key)
	if !ok {
		panic("form: unknown setting " + key)
	}
	return f
}

// describe is a field's help line: what it is, its range and default.
func describe(f config.Field) string {
	d := plain(f.Help)
	if r := f.Range(); r != "" && len(f.Choices) == 0 {
		d += " · " + r
	}
	if def := defaultText(f); def != "" {
		d += " · default " + def
	}
	return d
}

func defaultText(f config.Field) string {
	switch v := f.Default.(type) {
	case string:
		return v
	case []string:
		return strings.Join(v, ",")
	case []int:
		parts := make([]string, len(v))
		for i, n := range v {
			parts[i] = strconv.Itoa(n)
		}
		return strings.Join(parts, ",")
	case bool:
		if v {
			return "yes"
		}
		return ""
	}
	return fmt.Sprint(f.Default)
}

// plain drops the backticks of help written for the command line's
// markdown docs: on the form they would show as such.
func plain(s string) string { return strings.ReplaceAll(s, "`", "") }

// input builds the huh field of one setting, bound to the form's values.
func (m *Model) input(key string) huh.Field {
	f := field(key)
	title := "--" + f.Flag
	switch {
	case f.Kind == config.Bool:
		return huh.NewConfirm().Key(key).Title(title).Description(plain(f.Help)).
			Affirmative("yes").Negative("no").Value(m.bools[key])
	case len(f.Choices) > 0:
		// An inline choice shows one option at a time: the description
		// lists them all.
		return huh.NewSelect[string]().Key(key).Title(title).
			Description(plain(f.Help) + " · " + strings.Join(f.Choices, " | ") + " (←/→)").Inline(true).
			Options(huh.NewOptions(f.Choices...)...).Value(m.vals[key])
	}
	in := huh.NewInput().Key(key).Title(title).Description(describe(f)).Value(m.vals[key]).Validate(check(f))
	if f.PoolWords {
		// It counts pool words (LMCache's meaning): the tokens they make
		// are shown beside it, updated as it is typed (refreshLDP).
		m.ldpInput, m.ldpField = in, f
		m.refreshLDP()
	}
	return in
}

// refreshLDP rewrites the --ldp-context-length field's description with
// the tokens its value makes. It runs on the update loop (a description
// func would run in a command, racing the typing).
func (m *Model) refreshLDP() {
	if m.ldpInput == nil {
		return
	}
	d := describe(m.ldpField)
	if e := m.ldpEstimate(*m.vals[m.ldpField.Key]); e != "" {
		d += " · " + e
	}
	m.ldpInput.Description(d)
}
