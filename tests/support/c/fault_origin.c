/* fault_origin.c: preloaded (LD_PRELOAD) into a test's child process, it
 * names the shared object whose code raised SIGSEGV or SIGBUS and exits
 * with FAULT_IN_DRIVER when that object is the CUDA driver (libcuda.so),
 * so that a test can excuse a fault inside the driver and nothing else;
 * a fault anywhere else is raised again and kills the child as before.
 * x86-64 Linux (the faulting instruction is read from RIP). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#define FAULT_IN_DRIVER 86

static void
say(const char *text)
{
    (void)!write(STDERR_FILENO, text, strlen(text));
}

static void
on_fault(int sig, siginfo_t *info, void *context)
{
    const ucontext_t *state = context;
    void *pc = (void *)state->uc_mcontext.gregs[REG_RIP];
    Dl_info where;
    const char *object = dladdr(pc, &where) && where.dli_fname != NULL
                         ? where.dli_fname : "(no shared object)";
    (void)info;
    say("fault_origin: the faulting instruction is in ");
    say(object);
    say("\n");
    if (strstr(object, "libcuda.so") != NULL) {
        _exit(FAULT_IN_DRIVER);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

__attribute__((constructor)) static void
install(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigaction(SIGSEGV, &action, NULL);
    sigaction(SIGBUS, &action, NULL);
}
