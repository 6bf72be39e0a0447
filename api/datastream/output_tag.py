"""OutputTag, as in ``pyflink.datastream.OutputTag``: names a side output."""
from typing import List, Union

from api.common.typeinfo import TypeInformation, Types


class OutputTag:
    """Names a side output of a process function and gives its type.

    A process function emits to it by yielding ``(tag, value)`` (or with
    ``ctx.output(tag, value)``); ``stream.get_side_output(tag)`` is the side stream::

        late = OutputTag("late", Types.STRING())
        main = ds.process(MyProcessFunction())
        main.get_side_output(late).print()
    """

    def __init__(self, tag_id: str,
                 type_info: Union[TypeInformation, List[TypeInformation], None] = None):
        if not tag_id:
            raise ValueError("OutputTag tag_id cannot be None or empty string")
        if type_info is None:
            type_info = Types.PICKLED_BYTE_ARRAY()
        elif isinstance(type_info, list):
            type_info = Types.ROW(type_info)
        elif not isinstance(type_info, TypeInformation):
            raise TypeError("OutputTag type_info must be None, list or TypeInformation")
        self.tag_id = tag_id
        self.type_info = type_info

    def get_java_output_tag(self):
        """JVM-only: there is no Java OutputTag here, so this returns None."""
        return None

    def __repr__(self):
        return f"OutputTag({self.tag_id!r}, {self.type_info!r})"
