import Glibc

/// Writes `message` and a newline to standard error, unbuffered.
public func printError(_ message: String) {
    printErrorRaw(message + "\n")
}

/// Prints `program: message` on standard error and ends the process with `code`.
public func exit(_ code: ExitCode, program: String, message: String) -> Never {
    printError("\(program): \(message)")
    exit(code.rawValue)
}

/// Writes `text` and a newline to standard output at once (unbuffered), so a reader on a pipe
/// sees each line as soon as it is printed.
public func printOutput(_ text: String) {
    var bytes = Array((text + "\n").utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        bytes = bytes.dropFirst(written)
    }
}

/// Writes `text` to standard error as it is (no newline): for progress lines on a terminal.
public func printErrorRaw(_ text: String) {
    _ = text.utf8CString.withUnsafeBufferPointer { write(STDERR_FILENO, $0.baseAddress, $0.count - 1) }
}
