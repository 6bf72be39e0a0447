"""Flink SQL's type syntax (``INT NOT NULL``, ``VARCHAR(10)``, ``TIMESTAMP_LTZ(3)``,
``ROW<a INT, b STRING>``) read into DataTypes: what CREATE TABLE and a Schema's column
types given as strings declare."""
import re
from typing import List

from .types import DataType, DataTypes

__all__ = ['parse_data_type', 'unquoted']

_SIMPLE = {'BOOLEAN': DataTypes.BOOLEAN, 'TINYINT': DataTypes.TINYINT,
           'SMALLINT': DataTypes.SMALLINT, 'INT': DataTypes.INT, 'INTEGER': DataTypes.INT,
           'BIGINT': DataTypes.BIGINT, 'FLOAT': DataTypes.FLOAT, 'DOUBLE': DataTypes.DOUBLE,
           'STRING': DataTypes.STRING, 'BYTES': DataTypes.BYTES, 'DATE': DataTypes.DATE}
_TOKEN = re.compile(r'\s*(`(?:[^`]|``)+`|[A-Za-z_$][\w$]*|\d+|[(),<>])')


def parse_data_type(text: str) -> DataType:
    """The DataType of a Flink SQL type: ``INT NOT NULL``, ``VARCHAR(10)``,
    ``DECIMAL(10, 2)``, ``TIMESTAMP(3)``, ``TIMESTAMP_LTZ(3)``, ``ARRAY<INT>``,
    ``MAP<STRING, INT>``, ``ROW<a INT, b STRING>``."""
    tokens, position = [], 0
    while position < len(text.rstrip()):
        token = _TOKEN.match(text, position)
        if token is None:
            raise ValueError(f"cannot read the type {text.strip()!r} at {text[position:]!r}")
        tokens.append(token.group(1))
        position = token.end()
    parser = _TypeParser(tokens, text.strip())
    data_type = parser.data_type()
    if parser.tokens:
        raise ValueError(f"cannot read the type {text.strip()!r}: {' '.join(parser.tokens)!r} "
                         "is left over")
    return data_type


class _TypeParser:

    def __init__(self, tokens: List[str], text: str):
        self.tokens = tokens
        self.text = text

    def take(self, *words: str) -> bool:
        if self.tokens and self.tokens[0].upper() in words:
            self.tokens.pop(0)
            return True
        return False

    def expect(self, word: str) -> None:
        if not self.take(word):
            raise ValueError(f"cannot read the type {self.text!r}: expected {word!r}")

    def number(self) -> int:
        if not self.tokens or not self.tokens[0].isdigit():
            raise ValueError(f"cannot read the type {self.text!r}: expected a number")
        return int(self.tokens.pop(0))

    def parameters(self, *defaults: int) -> List[int]:
        """``(a, b)`` after a type name, or ``defaults``."""
        if not self.take('('):
            return list(defaults)
        values = [self.number()]
        while self.take(','):
            values.append(self.number())
        self.expect(')')
        return values

    def data_type(self) -> DataType:
        if not self.tokens:
            raise ValueError(f"cannot read the type {self.text!r}: it ends early")
        name = self.tokens.pop(0).upper()
        if name in _SIMPLE:
            if name == 'DOUBLE':
                self.take('PRECISION')
            data_type = _SIMPLE[name]()
        elif name in ('DECIMAL', 'DEC', 'NUMERIC'):
            data_type = DataTypes.DECIMAL(*self.parameters(10, 0))
        elif name in ('CHAR', 'BINARY'):
            data_type = getattr(DataTypes, name)(*self.parameters(1))
        elif name in ('VARCHAR', 'VARBINARY'):  # without a length: of any length
            length = self.parameters()
            data_type = getattr(DataTypes, name)(*length) if length else \
                (DataTypes.STRING() if name == 'VARCHAR' else DataTypes.BYTES())
        elif name == 'TIME':
            data_type = DataTypes.TIME(*self.parameters(0))
            self.time_zone(False)
        elif name in ('TIMESTAMP', 'TIMESTAMP_LTZ'):
            precision = self.parameters(6)
            local = name == 'TIMESTAMP_LTZ' or self.time_zone(True)
            data_type = (DataTypes.TIMESTAMP_LTZ if local else DataTypes.TIMESTAMP)(*precision)
        elif name == 'ARRAY':
            self.expect('<')
            data_type = DataTypes.ARRAY(self.data_type())
            self.expect('>')
        elif name == 'MAP':
            self.expect('<')
            key = self.data_type()
            self.expect(',')
            data_type = DataTypes.MAP(key, self.data_type())
            self.expect('>')
        elif name == 'ROW':
            data_type = self.row()
        else:
            raise ValueError(f"the type {self.text!r} is not available here ({name})")
        if self.take('NOT'):
            self.expect('NULL')
            return data_type.not_null()
        self.take('NULL')
        return data_type

    def time_zone(self, local_allowed: bool) -> bool:
        """Reads ``WITHOUT TIME ZONE`` (False) or ``WITH LOCAL TIME ZONE`` (True)."""
        if self.take('WITHOUT'):
            self.expect('TIME')
            self.expect('ZONE')
        elif local_allowed and self.take('WITH'):
            self.expect('LOCAL')
            self.expect('TIME')
            self.expect('ZONE')
            return True
        return False

    def row(self) -> DataType:
        closing = '>' if self.take('<') else ')' if self.take('(') else None
        if closing is None:
            raise ValueError(f"cannot read the type {self.text!r}: ROW<name type, ...>")
        fields = []
        while not self.take(closing):
            if fields:
                self.expect(',')
            fields.append(DataTypes.FIELD(unquoted(self.tokens.pop(0)), self.data_type()))
        return DataTypes.ROW(fields)


def unquoted(identifier: str) -> str:
    """An identifier without its backquotes: ```a b``` is ``a b``."""
    return identifier[1:-1].replace('``', '`') if identifier.startswith('`') else identifier
