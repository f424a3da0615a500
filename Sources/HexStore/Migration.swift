/// One step of the schema: the SQL that takes the database from `version - 1` to `version`.
public struct Migration: Sendable {
    public let version: Int
    public let sql: String

    public init(version: Int, sql: String) {
        self.version = version
        self.sql = sql
    }
}
