package admin

// ConnsServed returns how many connections s holds a slot for
// (Options.MaxConns).
func ConnsServed(s *Server) int { return len(s.slots) }
