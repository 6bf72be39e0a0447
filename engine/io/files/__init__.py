"""Files for the engine: ``source`` reads them (FileSource), ``sink`` writes them
(FileSink, and the legacy ``write_as_text`` and ``write_as_csv``)."""
