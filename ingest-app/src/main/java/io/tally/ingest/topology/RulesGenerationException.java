package io.tally.ingest.topology;

/**
 * Stage 5 met a document written under a newer rules generation than the one this process counts: a rules change was
 * applied ({@code ./tally rules apply}) and another instance already counts it. Carrying on would write the old rules'
 * values over the new ones, so the process stops (ingest-app exits non-zero) and must be restarted with the applied
 * rules.
 */
public final class RulesGenerationException extends RuntimeException {
    public RulesGenerationException(String document, long documentGeneration, long counted) {
        super(document + " was written under rules generation " + documentGeneration + ", newer than generation " + counted
                + " which this process counts: a rules change was applied; restart ingest-app with the applied rules file"
                + " (./tally rules plan FILE says whether FILE is it)");
    }
}
