/**
 * How shares moved in a user's position, per event (the position ledger's journal,
 * `position_move`): `router` (a router Trade), `clob_taker` (the user's own order or market order
 * filled against the book), `clob_maker` (the user's resting order was filled), `split`, `merge`,
 * `redeem`, `refund`, `transfer` (outcome tokens sent or received outside the venues), `dust`
 * (outcome tokens the router handed back). The pipeline writes them, the APIs list them.
 */
export const MOVE_SOURCES = ["router", "clob_taker", "clob_maker", "split", "merge", "redeem", "refund", "transfer", "dust"] as const
export type MoveSource = (typeof MOVE_SOURCES)[number]
