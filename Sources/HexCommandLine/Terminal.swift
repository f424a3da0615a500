#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes `message` and a newline to standard error, unbuffered.
public func printError(_ message: String) {
    let line = message + "\n"
    _ = line.utf8CString.withUnsafeBufferPointer { write(STDERR_FILENO, $0.baseAddress, $0.count - 1) }
}

/// Prints `program: message` on standard error and ends the process with `code`.
public func exit(_ code: ExitCode, program: String, message: String) -> Never {
    printError("\(program): \(message)")
    exit(code.rawValue)
}
