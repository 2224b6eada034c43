/// Pure projections of ledger events into group state.
public enum ProjectionsModule {}
