import HexCarrier
import HexControl
import HexEngine
import HexKit

extension ControlError {
    /// How the control protocol reports an error of the daemon's services: the one place where
    /// domain errors become control codes (and so hexctl's exit codes).
    init(reporting error: any Error) {
        switch error {
        case let error as ControlError:
            self = error
        case LookupError.unbracketed:
            self.init(.usage, "\(error)")
        case let error as LookupError:
            self.init(.notFound, error.description)
        case let error as HexManagerError:
            switch error {
            case .invalidColor: self.init(.usage, error.description)
            case .hexNotFound, .alertNotFound: self.init(.notFound, error.description)
            }
        case let error as SendError:
            switch error {
            case .undelivered(let reason): self.init(.unreachable, reason)
            case .refused(let reason): self.init(.rejected, reason)
            }
        case let error as OutboxError:
            switch error {
            case .full: self.init(.unreachable, error.description)
            case .messageIDTaken: self.init(.usage, error.description)
            }
        case let error as ShareError:
            switch error {
            case .unknownProvider, .queryInFlight, .noProviderFor: self.init(.usage, error.description)
            case .linkFailed, .cancelled: self.init(.failed, error.description)
            }
        default:
            self.init(.failed, "\(error)")
        }
    }
}
