package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// RegisterFlags adds one flag per field to fs, with its default and help.
func RegisterFlags(fs *pflag.FlagSet) {
	for _, f := range Fields {
		switch f.Kind {
		case Int:
			fs.IntP(f.Flag, f.Short, f.Default.(int), f.Help)
		case Float:
			fs.Float64P(f.Flag, f.Short, f.Default.(float64), f.Help)
		case String:
			fs.StringP(f.Flag, f.Short, f.Default.(string), f.Help)
		case Bool:
			fs.BoolP(f.Flag, f.Short, f.Default.(bool), f.Help)
		case Duration:
			fs.DurationP(f.Flag, f.Short, f.Default.(time.Duration), f.Help)
		case IntList:
			fs.IntSliceP(f.Flag, f.Short, f.Default.([]int), f.Help)
		case StringList:
			fs.StringArrayP(f.Flag, f.Short, f.Default.([]string), f.Help)
		}
		if f.Hidden {
			fs.MarkHidden(f.Flag)
		}
	}
}

// Layers are the sources Resolve merges, lowest first after the defaults.
type Layers struct {
	// File is the user's config.yaml; empty means Dir()/config.yaml when
	// it exists.
	File string
	// Env reads KVBENCH_* variables; nil means os.LookupEnv.
	Env func(string) (string, bool)
	// JSON is an exported config given with --config.
	JSON string
}

// EnvName is the environment variable that sets key.
func EnvName(key string) string { return "KVBENCH_" + strings.ToUpper(key) }

// Resolve builds the config: defaults < config.yaml < KVBENCH_* env <
// --config JSON < the flags the user actually set on fs.
func Resolve(fs *pflag.FlagSet, l Layers) (*Config, error) {
	c := Default()
	// viper reads config.yaml and nothing else; the layering is ours
	// (docs/cli.md "Resolution order" says why).
	v := viper.New()
	file := l.File
	if file == "" {
		if p := filepath.Join(Dir(), "config.yaml"); fileExists(p) {
			file = p
		}
	}
	if file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("config %s: %v", file, oneLine(err))
		}
		for _, k := range v.AllKeys() {
			f, ok := Lookup(k)
			if !ok {
				if isFieldPrefix(k) {
					continue
				}
				return nil, fmt.Errorf("config %s: unknown key %q", file, k)
			}
			if !v.InConfig(k) {
				continue
			}
			cv, err := coerceLoose(f, v.Get(k))
			if err != nil {
				return nil, fmt.Errorf("config %s: %v", file, err)
			}
			c.values[f.Key] = cv
			c.set[f.Key] = true
		}
	}
	env := l.Env
	if env == nil {
		env = os.LookupEnv
	}
	for _, f := range Fields {
		if s, ok := env(EnvName(f.Key)); ok {
			val, err := Parse(f, s)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", EnvName(f.Key), err)
			}
			c.values[f.Key] = val
			c.set[f.Key] = true
		}
	}
	if l.JSON != "" {
		if err := c.LoadJSON(l.JSON); err != nil {
			return nil, err
		}
	}
	if fs != nil {
		for _, f := range Fields {
			fl := fs.Lookup(f.Flag)
			if fl == nil || !fl.Changed {
				continue
			}
			var val any
			var err error
			switch f.Kind {
			case IntList:
				val, err = fs.GetIntSlice(f.Flag)
			case StringList:
				val, err = fs.GetStringArray(f.Flag)
			default:
				val, err = Parse(f, fl.Value.String())
			}
			if err != nil {
				return nil, err
			}
			c.values[f.Key] = val
			c.set[f.Key] = true
		}
	}
	c.scrubURLs()
	return c, nil
}

func isFieldPrefix(k string) bool {
	for _, f := range Fields {
		if strings.HasPrefix(f.Key, k+".") {
			return true
		}
	}
	return false
}

// coerceLoose accepts what YAML decoding yields (ints, floats, strings).
func coerceLoose(f Field, v any) (any, error) {
	switch t := v.(type) {
	case string:
		if f.Kind != String {
			return Parse(f, t)
		}
	case int:
		if f.Kind == Duration {
			return time.Duration(t) * time.Second, nil
		}
	case float64:
		if f.Kind == Duration {
			return time.Duration(t * float64(time.Second)), nil
		}
	}
	return coerce(f, v)
}

func oneLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// ErrMissing marks a missing-arguments error (exit code 2).
var ErrMissing = errors.New("missing required arguments")
