/**
 * How the community features (comments, notifications) report their database: the backend's own
 * tables answer every failing statement as 503 INDEXER_UNAVAILABLE "the database is unavailable"
 * (the spec's code for a store the backend cannot reach), never a 500.
 */
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { IndexerUnavailable } from "../../../schema/errors.js"

const databaseDown = () => new IndexerUnavailable({ message: "the database is unavailable" })

/** `effect` with its `SqlError`s answered as `IndexerUnavailable`. */
export const onSqlError = <A, E, R>(effect: Effect.Effect<A, E | SqlError, R>) =>
  Effect.catchIf(effect, (e): e is SqlError => e instanceof SqlError, databaseDown) as Effect.Effect<
    A,
    Exclude<E, SqlError> | InstanceType<typeof IndexerUnavailable>,
    R
  >
