/**
 * One setting: an environment variable with its description, its default, and how it is read.
 * A tree of settings (`SettingTree`) is both the configuration's shape and the list `--help` and
 * docs/settings.md show, so nothing is declared twice.
 *
 * Invariant: a default is written as the text a user would set (`"0.0005"`, not wei) and read
 * through the same reader as a set value, so the default shown is the default used.
 */
import { Config, ConfigError, Either, Option } from "effect"
import type { Reader } from "./readers.js"

/** What an unset variable means: the text it reads as, or (for an optional one) a sentence. */
export type Fallback = { readonly _tag: "Text"; readonly text: string } | { readonly _tag: "Unset"; readonly means: string }

export class Setting<A> {
  constructor(
    /** The environment variable. */
    readonly name: string,
    /** One line for `--help` and docs/settings.md; may quote code in backticks. */
    readonly description: string,
    readonly fallback: Fallback,
    readonly config: Config.Config<A>
  ) {}

  /** The same variable, its value mapped (the default and the help text stay). */
  map<B>(f: (a: A) => B): Setting<B> {
    return new Setting(this.name, this.description, this.fallback, Config.map(this.config, f))
  }
}

/** The variable's text, checked by `reader`; the message says what is wrong and the Config machinery prefixes the variable's name. */
const checked = <A>(raw: Config.Config<string>, reader: Reader<A>): Config.Config<A> =>
  Config.mapOrFail(raw, (text) => Either.mapLeft(reader(text), (message) => ConfigError.InvalidData([], message)))

/**
 * A variable read by `reader`; unset reads as the text `fallback`, through the same reader (read
 * here, once: a default the reader refuses is a programming error and stops the module loading).
 * The default is applied after the check, not before it: that order keeps the variable's name on
 * the check's failure.
 */
export const withDefault = <A>(name: string, reader: Reader<A>, fallback: string, description: string): Setting<A> => {
  const value = Either.getOrThrowWith(reader(fallback), (message) => new Error(`default of ${name} is invalid: ${message}`))
  return new Setting(
    name,
    description,
    { _tag: "Text", text: fallback },
    checked(Config.string(name), reader).pipe(Config.withDefault(value))
  )
}

/** A variable that may stay unset (`None`); `means` says what happens then. */
export const optional = <A>(name: string, reader: Reader<A>, means: string, description: string): Setting<Option.Option<A>> =>
  new Setting(name, description, { _tag: "Unset", means }, Config.option(checked(Config.string(name), reader)))

/** Settings grouped as the configuration's value is: a leaf is a setting, a branch a record of them. */
export interface SettingTree {
  readonly [key: string]: Setting<any> | SettingTree
}

/** The value a tree of settings reads as. */
export type ValueOf<T extends SettingTree> = {
  readonly [K in keyof T]: T[K] extends Setting<infer A> ? A : T[K] extends SettingTree ? ValueOf<T[K]> : never
}

/** The whole tree as one `Config`, read branch by branch in the tree's order. */
export const configOf = <T extends SettingTree>(tree: T): Config.Config<ValueOf<T>> =>
  Config.all(
    Object.fromEntries(Object.entries(tree).map(([key, node]) => [key, node instanceof Setting ? node.config : configOf(node)]))
  ) as Config.Config<any>

/** Every setting of the tree, depth first in the tree's order: the order `--help` and docs/settings.md list them. */
export const listOf = (tree: SettingTree): ReadonlyArray<Setting<unknown>> =>
  Object.values(tree).flatMap((node) => (node instanceof Setting ? [node] : listOf(node)))
