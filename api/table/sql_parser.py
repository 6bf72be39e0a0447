"""Flink SQL read with sqlglot: a Flink dialect (backquoted names, Flink's types, the
windowing table functions ``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))``)
and the translation of a parsed query into the Spark SQL that runs it in BATCH mode (types
with precision, ``TIMESTAMP_LTZ``, ``PROCTIME()``, functions Spark spells differently)."""
from typing import List

import sqlglot
from sqlglot import exp, generator, parser, tokens
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError
from sqlglot.tokens import TokenType

__all__ = ['FlinkSQL', 'WindowFunction', 'cast_type', 'expression_to_spark_sql',
           'parse_expression', 'parse_query', 'table_names', 'to_spark_sql', 'unsupported']

WINDOW_FUNCTIONS = ('TUMBLE', 'HOP', 'CUMULATE', 'SESSION')


class WindowFunction(exp.Expression, exp.Func):
    """A windowing table function: ``TUMBLE|HOP|CUMULATE|SESSION(TABLE t [PARTITION BY
    keys], DESCRIPTOR(time column), intervals...)``."""
    arg_types = {'this': True, 'table': True, 'partition_by': False, 'expressions': True}


def _window_function(name: str):
    def parse(self: parser.Parser) -> exp.Expression:
        if not self._match(TokenType.TABLE):
            self.raise_error(f"{name}: the first argument is TABLE <name>")
        table = self._parse_table_parts()
        partition = []
        if self._match(TokenType.PARTITION_BY):  # PARTITION BY k, or (k1, k2)
            parenthesized = self._match(TokenType.L_PAREN)
            partition = self._parse_csv(self._parse_column) if parenthesized else \
                [self._parse_column()]
            if parenthesized:
                self._match_r_paren()
        arguments = self._parse_csv(self._parse_assignment) if self._match(TokenType.COMMA) \
            else []
        return self.expression(WindowFunction(this=exp.Var(this=name), table=table,
                                              partition_by=partition, expressions=arguments))
    return parse


class FlinkSQL(Dialect):
    """Flink SQL as sqlglot reads it."""

    class Tokenizer(tokens.Tokenizer):
        IDENTIFIERS = ['`']
        QUOTES = ["'"]

    class Parser(parser.Parser):
        FUNC_TOKENS = {*parser.Parser.FUNC_TOKENS, TokenType.SESSION}
        FUNCTION_PARSERS = {**parser.Parser.FUNCTION_PARSERS,
                            **{name: _window_function(name) for name in WINDOW_FUNCTIONS}}

    class Generator(generator.Generator):
        TYPE_MAPPING = {**generator.Generator.TYPE_MAPPING,
                        exp.DataType.Type.TIMESTAMPLTZ: 'TIMESTAMP_LTZ'}


def unsupported(construct: str, sql: str, mode: str = 'STREAMING') -> NotImplementedError:
    """The error of a statement that names a construct not available in ``mode``."""
    text = ' '.join(sql.split())
    return NotImplementedError(f"{construct} are not supported in {mode} mode: "
                               f"{text if len(text) <= 200 else text[:197] + '...'}")


def parse_query(sql: str) -> exp.Expression:
    """The syntax tree of one Flink SQL query (SELECT, WITH, VALUES, UNION ...)."""
    try:
        statements = [s for s in sqlglot.parse(sql, read=FlinkSQL) if s is not None]
    except ParseError as e:
        raise ValueError(f"SQL parse failed. {e.errors[0]['description'] if e.errors else e}"
                         f" in: {' '.join(sql.split())}") from None
    if len(statements) != 1:
        raise ValueError(f"one statement expected, got {len(statements)}: {sql!r}")
    return statements[0]


def parse_expression(sql: str) -> exp.Expression:
    """The syntax tree of a Flink SQL scalar expression (``ts - INTERVAL '5' SECOND``)."""
    try:
        return sqlglot.parse_one(sql, read=FlinkSQL)
    except ParseError as e:
        raise ValueError(f"SQL parse failed. {e.errors[0]['description'] if e.errors else e}"
                         f" in: {' '.join(sql.split())}") from None


def cast_type(node: exp.Expression):
    """The DataType a top-level ``CAST(... AS type)`` declares (Flink shows the precision
    and length Spark drops), or None."""
    from .sql_types import parse_data_type
    while isinstance(node, (exp.Alias, exp.Paren)):
        node = node.this
    if not isinstance(node, exp.Cast):
        return None
    try:
        return parse_data_type(node.to.sql(dialect=FlinkSQL))
    except ValueError:
        return None


def expression_to_spark_sql(sql: str) -> str:
    """Spark SQL of a Flink SQL scalar expression."""
    return parse_expression(sql).transform(_spark_node, copy=True).sql(dialect='spark')


def table_names(tree: exp.Expression) -> List[str]:
    """The names of the tables and views a query reads."""
    return list(dict.fromkeys(t.name for t in tree.find_all(exp.Table)
                              if isinstance(t.this, exp.Identifier)))


# Flink type -> Spark type where they are spelled differently (precision is dropped: Spark
# keeps microseconds, and its strings have no length)
_SPARK_TYPES = {exp.DataType.Type.TIMESTAMP: 'TIMESTAMP_NTZ',
                exp.DataType.Type.TIMESTAMPLTZ: 'TIMESTAMP',
                exp.DataType.Type.VARCHAR: 'STRING', exp.DataType.Type.CHAR: 'STRING',
                exp.DataType.Type.NVARCHAR: 'STRING', exp.DataType.Type.TEXT: 'STRING',
                exp.DataType.Type.VARBINARY: 'BINARY'}
# Flink function -> (Spark function, arguments kept)
_SPARK_FUNCTIONS = {'PROCTIME': 'CURRENT_TIMESTAMP', 'NOW': 'CURRENT_TIMESTAMP',
                    'CHARACTER_LENGTH': 'CHAR_LENGTH'}


def to_spark_sql(tree: exp.Expression, sql: str) -> str:
    """Spark SQL of the parsed Flink query ``sql``."""
    if next(tree.find_all(WindowFunction), None) is not None:
        raise unsupported('Windowing table functions (TUMBLE, HOP, CUMULATE, SESSION)', sql,
                          'BATCH')
    return tree.transform(_spark_node, copy=True).sql(dialect='spark')


def _spark_node(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.DataType):
        spark_name = _SPARK_TYPES.get(node.this)
        return exp.DataType.build(spark_name, dialect='spark') if spark_name else node
    if isinstance(node, exp.Anonymous):
        name = node.name.upper()
        if name == 'TO_TIMESTAMP_LTZ':  # epoch seconds (precision 0) or milliseconds (3)
            precision = node.expressions[1].name if len(node.expressions) > 1 else '3'
            function = {'0': 'TIMESTAMP_SECONDS', '3': 'TIMESTAMP_MILLIS'}.get(precision)
            if function is None:
                raise NotImplementedError("TO_TIMESTAMP_LTZ(value, precision): the precision "
                                          "is 0 (seconds) or 3 (milliseconds) here")
            return exp.Anonymous(this=function, expressions=node.expressions[:1])
        if name == 'SHA256':
            return exp.Anonymous(this='SHA2', expressions=[*node.expressions,
                                                           exp.Literal.number(256)])
        if name in _SPARK_FUNCTIONS:
            return exp.Anonymous(this=_SPARK_FUNCTIONS[name], expressions=node.expressions)
    return node
