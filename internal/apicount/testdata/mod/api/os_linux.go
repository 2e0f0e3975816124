package api

// top 1 on linux
func OnLinux() {}
