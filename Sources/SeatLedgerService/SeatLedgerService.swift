/// `seatledger serve`: the HTTP service over a `LedgerPool` (routes, tokens, metrics, logs).
public enum SeatLedgerService {}
