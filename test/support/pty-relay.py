"""Runs a command on a pseudo-terminal and relays it: our stdin to the terminal, the terminal to
our stdout. A test drives an interactive program (one that checks isTTY) through plain pipes.
A line `\x03` alone on stdin becomes Ctrl-C (the terminal's interrupt character)."""
import os, pty, select, sys, signal, tty

def main() -> int:
    argv = sys.argv[1:]
    if argv and argv[0] == '--':
        argv = argv[1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.setdefault('TERM', 'dumb')
        os.execvp(argv[0], argv)
    # A wide terminal, so the program does not wrap the lines a test reads.
    try:
        import fcntl, struct, termios
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 50, 200, 0, 0))
    except Exception:
        pass
    stdin = sys.stdin.fileno()
    stdout = sys.stdout.fileno()
    open_in = True
    while True:
        fds = [fd] + ([stdin] if open_in else [])
        try:
            ready, _, _ = select.select(fds, [], [])
        except InterruptedError:
            continue
        if fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b''
            if not data:
                break
            os.write(stdout, data)
        if open_in and stdin in ready:
            data = os.read(stdin, 65536)
            if not data:
                open_in = False
                # End of our input is Ctrl-D at the start of a line on the terminal.
                os.write(fd, b'\x04')
            else:
                os.write(fd, data)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)

if __name__ == '__main__':
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(main())
