/// A pid no process can have: 2^22 + 1 is past any `pid_max` the kernel
/// allows (at most 2^22), so `kill(pid, 0)` fails with ESRCH. What a test
/// writes as a writer, holder or daemon that is gone.
package let pidOfNoProcess: Int32 = 4_194_305
