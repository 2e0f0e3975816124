package sdk

import (
	"encoding/json"

	"github.com/extkernel/extkernel/protocol"
)

// decodeInitParams decodes the params of initialize into p, which must be
// zero, as decodeParams does (json.Unmarshal: the same result, the same
// errors). The usual shape is decoded by hand: in a fresh plugin process
// json.Unmarshal first builds its decoders for InitializeParams, HostInfo
// and PluginInfo by reflection, which measured 0.08 ms of the 1.5 ms from
// exec to the answered handshake (BENCHMARKS.md, sidecar). The hand path
// takes an object with exactly spelled keys among protocol_version, host
// (name, version), plugin (name, version, data_dir), config (any JSON
// value) and session (strings), each key at most once, no null, and
// strings of printable ASCII without escapes; anything else, including
// anything invalid, goes to json.Unmarshal.
func decodeInitParams(raw json.RawMessage, p *protocol.InitializeParams) *protocol.Error {
	var fast protocol.InitializeParams
	if (&initScanner{data: raw}).params(&fast) {
		*p = fast
		return nil
	}
	return decodeParams(raw, p)
}

// initScanner reads the shape decodeInitParams decodes by hand. Its
// methods report false for anything else.
type initScanner struct {
	data []byte
	i    int
}

func (s *initScanner) params(p *protocol.InitializeParams) bool {
	const (
		version = 1 << iota
		host
		plugin
		config
		session
	)
	var seen int
	ok := s.object(func(key string) bool {
		var bit int
		var read func() bool
		switch key {
		case "protocol_version":
			bit, read = version, func() bool { return s.str(&p.ProtocolVersion) }
		case "host":
			bit, read = host, func() bool {
				return s.fields(map[string]*string{"name": &p.Host.Name, "version": &p.Host.Version})
			}
		case "plugin":
			bit, read = plugin, func() bool {
				return s.fields(map[string]*string{"name": &p.Plugin.Name, "version": &p.Plugin.Version, "data_dir": &p.Plugin.DataDir})
			}
		case "config":
			bit, read = config, func() bool { return s.rawValue(&p.Config) }
		case "session":
			bit, read = session, func() bool { return s.strMap(&p.Session) }
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return read()
	})
	return ok && s.space() == len(s.data)
}

// object reads an object whose members' values member reads after their
// key, each key a plain string.
func (s *initScanner) object(member func(key string) bool) bool {
	if !s.byte('{') {
		return false
	}
	if s.space() < len(s.data) && s.data[s.i] == '}' {
		s.i++
		return true
	}
	for {
		var key string
		if !s.str(&key) || !s.byte(':') || !member(key) {
			return false
		}
		if s.space() >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// fields reads an object of plain strings whose keys are among fields,
// each at most once.
func (s *initScanner) fields(fields map[string]*string) bool {
	seen := make(map[string]bool, len(fields))
	return s.object(func(key string) bool {
		dst, ok := fields[key]
		if !ok || seen[key] {
			return false
		}
		seen[key] = true
		return s.str(dst)
	})
}

// strMap reads an object of plain strings into a new map.
func (s *initScanner) strMap(dst *map[string]string) bool {
	m := map[string]string{}
	ok := s.object(func(key string) bool {
		var v string
		if !s.str(&v) {
			return false
		}
		m[key] = v
		return true
	})
	*dst = m
	return ok
}

// str reads a string of printable ASCII without escapes.
func (s *initScanner) str(dst *string) bool {
	if !s.byte('"') {
		return false
	}
	start := s.i
	for ; s.i < len(s.data); s.i++ {
		switch c := s.data[s.i]; {
		case c == '"':
			*dst = string(s.data[start:s.i])
			s.i++
			return true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return false
		}
	}
	return false
}

// rawValue reads any JSON value other than null, checked by json.Valid,
// into a copy, as json.RawMessage's UnmarshalJSON keeps it.
func (s *initScanner) rawValue(dst *json.RawMessage) bool {
	start := s.space()
	if !s.skipValue(0) {
		return false
	}
	v := s.data[start:s.i]
	if v[0] == 'n' || !json.Valid(v) {
		return false
	}
	*dst = append(json.RawMessage(nil), v...)
	return true
}

// skipValue moves past one JSON value: strings (with escapes), arrays and
// objects are matched, anything else runs to the next delimiter; rawValue
// validates what it spans.
func (s *initScanner) skipValue(depth int) bool {
	if depth > 1000 || s.space() >= len(s.data) {
		return false
	}
	switch s.data[s.i] {
	case '"':
		for s.i++; s.i < len(s.data); s.i++ {
			switch s.data[s.i] {
			case '\\':
				s.i++
			case '"':
				s.i++
				return true
			}
		}
		return false
	case '{', '[':
		end := byte('}')
		if s.data[s.i] == '[' {
			end = ']'
		}
		s.i++
		if s.space() < len(s.data) && s.data[s.i] == end {
			s.i++
			return true
		}
		for {
			if !s.skipValue(depth + 1) {
				return false
			}
			if s.space() >= len(s.data) {
				return false
			}
			switch c := s.data[s.i]; {
			case c == end:
				s.i++
				return true
			case c == ',' || (c == ':' && end == '}'):
				s.i++
			default:
				return false
			}
		}
	}
	start := s.i
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ',', '}', ']', ':', ' ', '\t', '\r', '\n':
			return s.i > start
		}
		s.i++
	}
	return s.i > start
}

// byte reads c after optional space.
func (s *initScanner) byte(c byte) bool {
	if s.space() < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

// space moves past JSON white space and returns the position.
func (s *initScanner) space() int {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return s.i
		}
	}
	return s.i
}
