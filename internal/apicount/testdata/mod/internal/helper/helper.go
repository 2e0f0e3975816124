package helper

type H struct{ A, b int }

func (H) Do() {}
