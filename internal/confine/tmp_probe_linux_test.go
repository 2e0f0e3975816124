//go:build linux

package confine

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/extkernel/extkernel/pluginpkg"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

func BenchmarkProbeExec(b *testing.B) {
	self, _ := os.Executable()
	p, _, err := Plan(Spec{Mode: pluginpkg.ConfineRequire, Vars: Vars{Package: b.TempDir(), Data: b.TempDir(), Tmp: b.TempDir()},
		Command: self, PATH: os.Getenv("PATH")})
	if err != nil {
		b.Fatal(err)
	}
	var plain, conf, plan, startOnly, plainStart time.Duration
	for i := 0; i < b.N; i++ {
		for j := 0; j < 2; j++ {
			cmd := exec.Command(self, "-test.run", "^$")
			t0 := time.Now()
			if (i+j)%2 == 0 {
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				plainStart += time.Since(t0)
				cmd.Wait()
				plain += time.Since(t0)
			} else {
				Plan(Spec{Mode: pluginpkg.ConfineRequire, Vars: Vars{Package: os.TempDir(), Data: os.TempDir(), Tmp: os.TempDir()},
					Command: self, PATH: os.Getenv("PATH")})
				t1 := time.Now()
				plan += t1.Sub(t0)
				if err := Start(p, cmd.Start); err != nil {
					b.Fatal(err)
				}
				startOnly += time.Since(t1)
				cmd.Wait()
				conf += time.Since(t0)
			}
		}
	}
	n := time.Duration(b.N)
	b.Logf("plain %v (start %v) confined %v (plan %v, start-returned %v)", plain/n, plainStart/n, conf/n, plan/n, startOnly/n)
}

func BenchmarkProbeParts(b *testing.B) {
	self, _ := os.Executable()
	p, _, err := Plan(Spec{Mode: pluginpkg.ConfineRequire, Vars: Vars{Package: b.TempDir(), Data: b.TempDir(), Tmp: b.TempDir()},
		Command: self, PATH: os.Getenv("PATH")})
	if err != nil {
		b.Fatal(err)
	}
	var sched, restrict, start, plainStart time.Duration
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(self, "-test.run", "^$")
		t0 := time.Now()
		cmd.Start()
		plainStart += time.Since(t0)
		cmd.Wait()
		cmd = exec.Command(self, "-test.run", "^$")
		t0 = time.Now()
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			t1 := time.Now()
			sched += t1.Sub(t0)
			if err := restrictThread(p); err != nil {
				b.Error(err)
			}
			t2 := time.Now()
			restrict += t2.Sub(t1)
			cmd.Start()
			start += time.Since(t2)
			close(done)
		}()
		<-done
		cmd.Wait()
	}
	n := time.Duration(b.N)
	b.Logf("plain start %v; confined: sched %v restrict %v start %v", plainStart/n, sched/n, restrict/n, start/n)
}

func BenchmarkProbeRestrict(b *testing.B) {
	self, _ := os.Executable()
	p, _, _ := Plan(Spec{Mode: pluginpkg.ConfineRequire, Vars: Vars{Package: b.TempDir(), Data: b.TempDir(), Tmp: b.TempDir()},
		Command: self, PATH: os.Getenv("PATH")})
	var caps, rules, ruleset, restrictSelf, seccompT time.Duration
	for i := 0; i < b.N; i++ {
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread()
			t0 := time.Now()
			dropCapabilities()
			t1 := time.Now()
			r, _ := fsRules(p)
			t2 := time.Now()
			fd, flags, err := presets[p.ABI].NewRulesetFD(r...)
			if err != nil {
				b.Error(err)
			}
			t3 := time.Now()
			unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
			ll.LandlockRestrictSelf(fd, flags)
			syscall.Close(fd)
			t4 := time.Now()
			seccomp.LoadFilter(filter(p))
			t5 := time.Now()
			caps += t1.Sub(t0)
			rules += t2.Sub(t1)
			ruleset += t3.Sub(t2)
			restrictSelf += t4.Sub(t3)
			seccompT += t5.Sub(t4)
		}()
		<-done
	}
	n := time.Duration(b.N)
	b.Logf("caps %v rules %v (%d read %d exec) ruleset %v restrict %v seccomp %v", caps/n, rules/n, len(p.Read), len(p.Exec), ruleset/n, restrictSelf/n, seccompT/n)
}
