package jsonfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// DecodeError is a problem Unmarshal found, located where the decoder gave
// an offset.
type DecodeError struct {
	// Line and Column locate the problem (1-based); both are zero when
	// encoding/json gave no offset (an unknown field).
	Line, Column int
	// Reason is the problem: encoding/json's message, or "invalid data
	// after the top-level value".
	Reason string
	// Err is encoding/json's error, nil for data after the value.
	Err error
}

// Error formats the problem as "line L, column C: reason", or the reason
// alone when it has no position.
func (e *DecodeError) Error() string {
	if e.Line > 0 {
		return "line " + strconv.Itoa(e.Line) + ", column " + strconv.Itoa(e.Column) + ": " + e.Reason
	}
	return e.Reason
}

// Unwrap returns encoding/json's error.
func (e *DecodeError) Unwrap() error { return e.Err }

// Unmarshal decodes data, which must hold one JSON value and nothing after
// it but white space, into v with encoding/json. With strict, a key v has no
// field for is an error. Every error is a *DecodeError: syntax errors point
// at the offending byte, type errors at the last byte of the value, a
// truncated input at its end.
func Unmarshal(data []byte, v any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return decodeError(data, err)
	}
	if rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		e := &DecodeError{Reason: "invalid data after the top-level value"}
		e.Line, e.Column = NewLines(data).Position(len(data) - len(rest))
		return e
	}
	return nil
}

// decodeError converts a decoding error into a *DecodeError with a line and
// column where the decoder gave an offset.
func decodeError(data []byte, err error) error {
	off := -1
	reason := err.Error()
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = int(se.Offset) - 1
		if se.Offset >= int64(len(data)) {
			off = len(data)
		}
		reason = syntaxMessage(se, data, off)
	case errors.As(err, &te):
		off = int(te.Offset) - 1
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		off = len(data)
		reason = "unexpected end of JSON input"
	}
	e := &DecodeError{Reason: reason, Err: err}
	if off >= 0 {
		e.Line, e.Column = NewLines(data).Position(off)
	}
	return e
}
