"""Word count: the PyFlink DataStream example, run on local Spark.

    python examples/word_count.py

The same program runs on PyFlink with the import prefix ``api`` replaced by ``pyflink``.
"""
from api.common import Types
from api.datastream import RuntimeExecutionMode, StreamExecutionEnvironment

TEXT = [
    "To be, or not to be,--that is the question:--",
    "Whether 'tis nobler in the mind to suffer",
    "The slings and arrows of outrageous fortune",
    "Or to take arms against a sea of troubles,",
    "And by opposing end them?--To die,--to sleep,--",
    "No more; and by a sleep to say we end",
    "The heartache, and the thousand natural shocks",
    "That flesh is heir to,--'tis a consummation",
    "Devoutly to be wish'd. To die,--to sleep;--",
]


def word_count():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(1)

    lines = env.from_collection(TEXT, type_info=Types.STRING())
    counts = (lines
              .flat_map(lambda line: [(word, 1) for word in line.lower().split()],
                        output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
              .key_by(lambda pair: pair[0])
              .reduce(lambda a, b: (a[0], a[1] + b[1])))
    counts.print()
    env.execute("word_count")


if __name__ == "__main__":
    word_count()
